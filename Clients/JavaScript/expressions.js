// The where-expression language (Documentation/Expressions.md) over a table's rows in the page:
// what `lda.selectWhere` and `DataTable.rowsWhere` read. The same grammar, NULL logic, operators,
// functions and errors as the server's; the differential compares the two.

import { RelataError } from './errors.js';
import { describe as describeValue, isoString, parseDate, storageOf } from './values.js';

const maximumDepth = 256;
const maximumNesting = 64;
const reserved = new Set(['AND', 'OR', 'NOT', 'IN', 'LIKE', 'BETWEEN', 'IS', 'ESCAPE']);
const comparisons = { '=': '=', '==': '=', '<>': '<>', '!=': '<>', '<': '<', '<=': '<=', '>': '>', '>=': '>=' };
const functions = {
    UPPER: [1, 1], LOWER: [1, 1], LENGTH: [1, 1], LEN: [1, 1], TRIM: [1, 1], ABS: [1, 1], ROUND: [1, 2],
    COALESCE: [1, Infinity], SUBSTRING: [2, 3], YEAR: [1, 1], MONTH: [1, 1], DAY: [1, 1],
};

/** A GUID inside an expression: compared by its canonical (upper-case) text. */
class Guid {
    constructor(text) { this.text = text.toUpperCase(); }
}

function location(offset, text) {
    const before = [...text].slice(0, offset).join('');
    const line = before.split('\n').length;
    const column = offset - (before.lastIndexOf('\n') + 1) + 1;
    return line === 1 ? `column ${column}` : `line ${line}, column ${column}`;
}

function syntaxError(message, offset, text) {
    return new RelataError('expressionSyntax', `${message} in "${text}"`, { location: location(offset, text) });
}

const isLetter = (character) => /\p{L}/u.test(character);
const isDigit = (character) => /\p{Nd}/u.test(character);
const isWhitespace = (character) => /\s/u.test(character);

/** Splits text into tokens `{kind, value, offset}` (offsets count characters, as the server's). */
function tokenize(text) {
    const characters = [...text];
    const tokens = [];
    let position = 0;
    const peek = (distance) => characters[position + distance];
    const matches = (symbol) => characters.slice(position, position + symbol.length).join('') === symbol;
    const identifierText = () => {
        const start = position;
        while (position < characters.length && (isLetter(characters[position]) || isDigit(characters[position]) || characters[position] === '_')) position++;
        return characters.slice(start, position).join('');
    };
    const quoted = (quote, what) => {
        const start = position;
        position++;
        let result = '';
        while (position < characters.length) {
            const character = characters[position++];
            if (character === quote) {
                if (characters[position] === quote) { result += quote; position++; } else return result;
            } else {
                result += character;
            }
        }
        throw syntaxError(`the ${what} that starts here is not closed (add ${quote})`, start, text);
    };
    for (;;) {
        while (position < characters.length && isWhitespace(characters[position])) position++;
        const start = position;
        if (position >= characters.length) {
            tokens.push({ kind: 'end', offset: start });
            return tokens;
        }
        const character = characters[position];
        if (isDigit(character) || (character === '.' && peek(1) !== undefined && isDigit(peek(1)))) {
            let isInteger = true;
            while (position < characters.length && isDigit(characters[position])) position++;
            if (characters[position] === '.') {
                isInteger = false;
                position++;
                while (position < characters.length && isDigit(characters[position])) position++;
            }
            if (characters[position] === 'e' || characters[position] === 'E') {
                isInteger = false;
                position++;
                if (characters[position] === '+' || characters[position] === '-') position++;
                while (position < characters.length && isDigit(characters[position])) position++;
            }
            const spelled = characters.slice(start, position).join('');
            const number = Number(spelled);
            if (!/^[0-9.eE+-]+$/.test(spelled) || Number.isNaN(number)) throw syntaxError(`'${spelled}' is not a number`, start, text);
            tokens.push({ kind: 'number', value: isInteger ? number : number, integer: isInteger && Number.isSafeInteger(number), offset: start });
        } else if (character === "'") {
            tokens.push({ kind: 'string', value: quoted("'", 'string'), offset: start });
        } else if (character === '"') {
            tokens.push({ kind: 'identifier', value: quoted('"', 'quoted field name'), quoted: true, offset: start });
        } else if (character === '[') {
            position++;
            const nameStart = position;
            while (position < characters.length && characters[position] !== ']') position++;
            if (position >= characters.length) throw syntaxError('the field name in [brackets] is not closed', start, text);
            tokens.push({ kind: 'identifier', value: characters.slice(nameStart, position).join(''), quoted: true, offset: start });
            position++;
        } else if (character === ':') {
            position++;
            const name = identifierText();
            if (!name) throw syntaxError("expected a parameter name after ':'", start, text);
            tokens.push({ kind: 'parameter', value: name, offset: start });
        } else if (isLetter(character) || character === '_') {
            tokens.push({ kind: 'identifier', value: identifierText(), quoted: false, offset: start });
        } else {
            const double = ['<>', '!=', '<=', '>=', '==', '||'].find(matches);
            if (double) {
                position += 2;
                tokens.push({ kind: 'symbol', value: double, offset: start });
            } else if ('=<>+-*/%(),.;'.includes(character)) {
                position++;
                tokens.push({ kind: 'symbol', value: character, offset: start });
            } else {
                throw syntaxError(`unexpected character '${character}'`, start, text);
            }
        }
    }
}

/** Parses an expression into a tree of plain objects; syntax errors say where. */
export function parseExpression(text) {
    const tokens = tokenize(text);
    let index = 0;
    let nesting = 0;
    const current = () => tokens[index];
    const error = (message, offset) => syntaxError(message, offset, text);
    const describe = (token) => {
        switch (token.kind) {
        case 'number': return `number ${token.value}`;
        case 'string': return `string '${token.value}'`;
        case 'identifier': return `'${token.value}'`;
        case 'parameter': return `parameter :${token.value}`;
        case 'symbol': return `'${token.value}'`;
        default: return 'the end of the expression';
        }
    };
    const isKeyword = (keyword) => current().kind === 'identifier' && !current().quoted && current().value.toUpperCase() === keyword;
    const acceptKeyword = (keyword) => (isKeyword(keyword) ? tokens[index++].offset : null);
    const acceptSymbol = (symbol) => {
        if (current().kind !== 'symbol' || current().value !== symbol) return false;
        index++;
        return true;
    };
    const expectSymbol = (symbol, after) => {
        if (!acceptSymbol(symbol)) throw error(`expected '${symbol}' after ${after}, found ${describe(current())}`, current().offset);
    };
    const enter = (offset) => {
        nesting++;
        if (nesting > maximumNesting) throw error(`the expression nests more than ${maximumNesting} parentheses, NOTs, signs or calls deep`, offset);
    };

    function parseOr() {
        let node = parseAnd();
        for (let offset; (offset = acceptKeyword('OR')) !== null;) node = { type: 'binary', op: 'OR', left: node, right: parseAnd(), offset };
        return node;
    }
    function parseAnd() {
        let node = parseNot();
        for (let offset; (offset = acceptKeyword('AND')) !== null;) node = { type: 'binary', op: 'AND', left: node, right: parseNot(), offset };
        return node;
    }
    function parseNot() {
        const offset = acceptKeyword('NOT');
        if (offset !== null) {
            enter(offset);
            const operand = parseNot();
            nesting--;
            return { type: 'not', operand };
        }
        return parsePredicate();
    }
    function parsePredicate() {
        const left = parseSum();
        if (current().kind === 'symbol' && comparisons[current().value]) {
            const { offset, value } = tokens[index++];
            return { type: 'binary', op: comparisons[value], left, right: parseSum(), offset };
        }
        if (acceptKeyword('IS') !== null) {
            const negated = acceptKeyword('NOT') !== null;
            if (acceptKeyword('NULL') === null) throw error(`expected NULL after IS${negated ? ' NOT' : ''}`, current().offset);
            return { type: 'isNull', operand: left, negated };
        }
        const notOffset = current().offset;
        const negated = acceptKeyword('NOT') !== null;
        if (acceptKeyword('IN') !== null) {
            expectSymbol('(', 'IN');
            const list = [parseSum()];
            while (acceptSymbol(',')) list.push(parseSum());
            expectSymbol(')', 'the IN list');
            return { type: 'in', operand: left, list, negated };
        }
        const likeOffset = acceptKeyword('LIKE');
        if (likeOffset !== null) {
            const pattern = parseSum();
            let escape = null;
            if (acceptKeyword('ESCAPE') !== null) {
                if (current().kind !== 'string' || [...current().value].length !== 1) throw error('expected a one-character string after ESCAPE', current().offset);
                escape = tokens[index++].value;
            }
            return { type: 'like', operand: left, pattern, escape, negated, offset: likeOffset };
        }
        if (acceptKeyword('BETWEEN') !== null) {
            const low = parseSum();
            if (acceptKeyword('AND') === null) throw error('expected AND in BETWEEN … AND …', current().offset);
            return { type: 'between', operand: left, low, high: parseSum(), negated };
        }
        if (negated) throw error('expected IN, LIKE or BETWEEN after NOT', notOffset);
        return left;
    }
    /** A left-to-right chain of `operand (symbol operand)*` for the given symbols. */
    function parseChain(symbols, parseOperand) {
        let node = parseOperand();
        while (current().kind === 'symbol' && symbols.includes(current().value)) {
            const { offset, value } = tokens[index++];
            node = { type: 'binary', op: value, left: node, right: parseOperand(), offset };
        }
        return node;
    }
    const parseSum = () => parseChain(['+', '-', '||'], parseProduct);
    const parseProduct = () => parseChain(['*', '/', '%'], parseUnary);
    function parseUnary() {
        const offset = current().offset;
        if (acceptSymbol('-')) {
            enter(offset);
            const operand = parseUnary();
            nesting--;
            if (operand.type === 'literal' && typeof operand.value === 'number') return { ...operand, value: -operand.value };
            return { type: 'negate', operand, offset };
        }
        if (acceptSymbol('+')) {
            enter(offset);
            const operand = parseUnary();
            nesting--;
            return operand;
        }
        return parsePrimary();
    }
    function parsePrimary() {
        const token = current();
        switch (token.kind) {
        case 'number':
            index++;
            return { type: 'literal', value: token.value, integer: token.integer };
        case 'string':
            index++;
            return { type: 'literal', value: token.value };
        case 'parameter':
            index++;
            return { type: 'parameter', name: token.value, offset: token.offset };
        case 'identifier': {
            index++;
            if (!token.quoted) {
                const upper = token.value.toUpperCase();
                if (upper === 'TRUE') return { type: 'literal', value: true };
                if (upper === 'FALSE') return { type: 'literal', value: false };
                if (upper === 'NULL') return { type: 'literal', value: null };
                if (reserved.has(upper)) throw error(`unexpected ${upper}; expected a value`, token.offset);
                if (acceptSymbol('(')) {
                    enter(token.offset);
                    const args = [];
                    if (!acceptSymbol(')')) {
                        args.push(parseOr());
                        while (acceptSymbol(',')) args.push(parseOr());
                        expectSymbol(')', `the arguments of ${token.value}`);
                    }
                    nesting--;
                    return { type: 'function', name: upper, args, offset: token.offset };
                }
            }
            return { type: 'field', name: token.value, offset: token.offset };
        }
        case 'symbol':
            if (token.value === '(') {
                index++;
                enter(token.offset);
                const node = parseOr();
                expectSymbol(')', 'the expression in parentheses');
                nesting--;
                return node;
            }
            break;
        default: break;
        }
        throw error(`unexpected ${describe(token)}; expected a value, a field or '('`, token.offset);
    }

    if (tokens[0].kind === 'end') throw error('the expression is empty', 0);
    const root = parseOr();
    if (current().kind !== 'end') throw error(`unexpected ${describe(current())}; expected an operator or the end`, current().offset);
    const pending = [[root, 1]];
    while (pending.length > 0) {
        const [node, depth] = pending.pop();
        if (depth > maximumDepth) {
            throw error(`the expression nests more than ${maximumDepth} levels deep (a long chain of operators nests too; use IN (…) for a long list of alternatives)`, 0);
        }
        for (const child of children(node)) pending.push([child, depth + 1]);
    }
    return root;
}

function children(node) {
    switch (node.type) {
    case 'negate': case 'not': case 'isNull': return [node.operand];
    case 'binary': return [node.left, node.right];
    case 'in': return [node.operand, ...node.list];
    case 'like': return [node.operand, node.pattern];
    case 'between': return [node.operand, node.low, node.high];
    case 'function': return node.args;
    default: return [];
    }
}

/** Why a value could not be evaluated; the caller adds the row and position. */
class EvaluationFailure {
    constructor(message, offset) {
        this.message = message;
        this.offset = offset;
    }
}

const kindName = (value) => {
    if (value === null) return 'NULL';
    if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'double';
    if (typeof value === 'boolean') return 'boolean';
    if (typeof value === 'string') return 'string';
    if (value instanceof Date) return 'date';
    if (value instanceof Guid) return 'guid';
    return 'blob';
};

const shown = (value) => {
    if (value === null) return 'NULL';
    if (value instanceof Guid) return value.text;
    if (value instanceof Date) return isoString(value);
    if (value instanceof Uint8Array) return `<${value.length} bytes>`;
    if (typeof value === 'string') return `'${value}'`;
    return describeValue(value);
};

/** Code point order of two strings (UTF-16 order differs above U+FFFF). */
function codePointOrder(a, b) {
    if (a === b) return 0;
    const left = [...a], right = [...b];
    for (let index = 0; index < Math.min(left.length, right.length); index++) {
        const x = left[index].codePointAt(0), y = right[index].codePointAt(0);
        if (x !== y) return x < y ? -1 : 1;
    }
    return left.length < right.length ? -1 : left.length > right.length ? 1 : 0;
}

const order = (a, b) => (a < b ? -1 : a > b ? 1 : 0);

/** Orders two values of compatible kinds (null when either is NULL); throws a message otherwise. */
function compare(left, right) {
    if (left === null || right === null) return null;
    if (typeof left === 'number' && typeof right === 'number') return order(left, right);
    if (typeof left === 'string' && typeof right === 'string') return codePointOrder(left, right);
    if (typeof left === 'boolean' && typeof right === 'boolean') return order(Number(left), Number(right));
    if (left instanceof Date && right instanceof Date) return order(left.getTime(), right.getTime());
    if (left instanceof Guid && right instanceof Guid) return codePointOrder(left.text, right.text);
    if (left instanceof Uint8Array && right instanceof Uint8Array) {
        for (let index = 0; index < Math.min(left.length, right.length); index++) if (left[index] !== right[index]) return order(left[index], right[index]);
        return order(left.length, right.length);
    }
    if (left instanceof Date && typeof right === 'string') {
        const date = parseDate(right);
        if (!date) throw `'${right}' is not a date`;
        return order(left.getTime(), date.getTime());
    }
    if (typeof left === 'string' && right instanceof Date) return -(compare(right, left));
    if (left instanceof Guid && typeof right === 'string') {
        const bare = right.replace(/^\{|\}$/g, '');
        if (!/^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$/.test(bare)) throw `'${right}' is not a GUID`;
        return codePointOrder(left.text, bare.toUpperCase());
    }
    if (typeof left === 'string' && right instanceof Guid) return -(compare(right, left));
    throw `cannot compare ${kindName(left)} ${shown(left)} with ${kindName(right)} ${shown(right)}`;
}

const holds = (op, result) => ({ '=': result === 0, '<>': result !== 0, '<': result < 0, '<=': result <= 0, '>': result > 0, '>=': result >= 0 }[op]);
const truthOf = (bool) => (bool ? 'yes' : 'no');
const negate = (truth) => (truth === 'yes' ? 'no' : truth === 'no' ? 'yes' : 'unknown');
const textOf = (value) => (value instanceof Guid ? value.text : value instanceof Date ? isoString(value) : String(value));

function arithmetic(op, left, right) {
    if (left === null || right === null) return null;
    if (op === '||' || (op === '+' && (typeof left === 'string' || typeof right === 'string'))) {
        if (typeof left !== 'string' && typeof right !== 'string') throw `'||' joins strings; ${shown(left)} and ${shown(right)} are not strings`;
        return textOf(left) + textOf(right);
    }
    if (typeof left !== 'number' || typeof right !== 'number') {
        throw `'${op}' needs numbers; got ${kindName(left)} ${shown(left)} and ${kindName(right)} ${shown(right)}`;
    }
    switch (op) {
    case '+': return left + right;
    case '-': return left - right;
    case '*': return left * right;
    case '/': return right === 0 ? null : left / right;
    default: return right === 0 ? null : left % right;
    }
}

function applyFunction(name, args) {
    if (name === 'COALESCE') return args.find((value) => value !== null) ?? null;
    if (args.some((value) => value === null)) return null;
    const [first] = args;
    const failure = (expected, value) => `${name} needs ${expected}, got ${kindName(value)} ${shown(value)}`;
    switch (name) {
    case 'UPPER': case 'LOWER': case 'TRIM': case 'LENGTH': case 'LEN': case 'SUBSTRING': {
        if (typeof first !== 'string') throw failure('a string', first);
        if (name === 'UPPER') return first.toUpperCase();
        if (name === 'LOWER') return first.toLowerCase();
        if (name === 'TRIM') return first.trim();
        if (name === 'SUBSTRING') {
            const start = args[1];
            if (typeof start !== 'number' || !Number.isInteger(start)) throw failure('an integer start', start);
            const characters = [...first];
            const length = args.length > 2 ? args[2] : characters.length;
            if (typeof length !== 'number' || !Number.isInteger(length) || length < 0) throw failure('a non-negative integer length', args[2]);
            const from = start > 0 ? start - 1 : 0;
            return characters.slice(from, from + length).join('');
        }
        return [...first].length;
    }
    case 'ABS':
        if (typeof first !== 'number') throw failure('a number', first);
        return Math.abs(first);
    case 'ROUND': {
        if (typeof first !== 'number') throw failure('a number', first);
        const places = args.length > 1 && Number.isInteger(args[1]) ? args[1] : 0;
        if (Number.isInteger(first)) return first;
        const scale = 10 ** places;
        const scaled = first * scale;
        // Half away from zero, as the server rounds.
        return (Math.sign(scaled) * Math.round(Math.abs(scaled))) / scale;
    }
    case 'YEAR': case 'MONTH': case 'DAY':
        if (!(first instanceof Date)) throw failure('a date', first);
        return name === 'YEAR' ? first.getUTCFullYear() : name === 'MONTH' ? first.getUTCMonth() + 1 : first.getUTCDate();
    default:
        return null;
    }
}

/** A LIKE pattern: `%` any run, `_` one character, case-insensitive. */
function likeMatcher(pattern, escape) {
    const parts = [];
    let escaping = false;
    for (const character of [...pattern.toLowerCase()]) {
        if (escaping) { parts.push({ literal: character }); escaping = false; } else if (character === escape) escaping = true;
        else if (character === '%') { if (parts.at(-1) !== 'any') parts.push('any'); } else if (character === '_') parts.push('one');
        else parts.push({ literal: character });
    }
    return (text) => {
        const characters = [...text.toLowerCase()];
        let textIndex = 0, partIndex = 0, starPart = -1, starText = 0;
        while (textIndex < characters.length) {
            if (partIndex < parts.length) {
                const part = parts[partIndex];
                if (part === 'any') { starPart = partIndex; starText = textIndex; partIndex++; continue; }
                if (part === 'one' || part.literal === characters[textIndex]) { textIndex++; partIndex++; continue; }
            }
            if (starPart < 0) return false;
            partIndex = starPart + 1;
            starText++;
            textIndex = starText;
        }
        while (partIndex < parts.length && parts[partIndex] === 'any') partIndex++;
        return partIndex === parts.length;
    };
}

/**
 * The rows of a table a where expression keeps: posted values (a row being edited is matched on its
 * values before `edit()`), never deleted rows nor rows added in edit mode.
 * @param {import('./table.js').DataTable} table
 * @param {string} text
 * @param {Record<string, unknown>} [parameters] plain values (numbers, strings, booleans, Dates, null)
 * @param {(row: object) => boolean} [visible] which rows count (all but deleted and added in edit mode)
 */
export function rowsWhere(table, text, parameters = {}, visible = null) {
    const root = parseExpression(String(text));
    const fieldError = (name, offset) => {
        const known = [...table.fields, ...table.calculatedFields, ...table.lookupFields].map((field) => field.name).join(', ');
        return new RelataError('unknownField', `table ${table.name} has no field '${name}' (its fields: ${known}) in "${text}"`,
            { table: table.name, field: name, location: location(offset, text) });
    };
    const constantOf = (node) => {
        if (node.type === 'literal') return { value: node.value };
        if (node.type === 'parameter') {
            if (!Object.prototype.hasOwnProperty.call(parameters, node.name)) {
                const given = Object.keys(parameters).sort().map((name) => `:${name}`).join(', ');
                throw new RelataError('expressionEvaluation', `no value was given for parameter :${node.name} (given: ${given || 'none'}) in "${text}"`,
                    { table: table.name, location: location(node.offset, text) });
            }
            const value = parameters[node.name];
            return { value: value === undefined ? null : value };
        }
        return null;
    };
    // Names are checked before any row is read, as the server compiles before it evaluates.
    const check = (node) => {
        if (node.type === 'field' && !table.indexByName.has(node.name.toLowerCase()) && !table.isVirtual(node.name)) throw fieldError(node.name, node.offset);
        if (node.type === 'function') {
            const arity = functions[node.name];
            if (!arity) throw syntaxError(`unknown function ${node.name} (known: ${Object.keys(functions).join(', ')})`, node.offset, text);
            if (node.args.length < arity[0] || node.args.length > arity[1]) {
                const words = arity[0] === arity[1] ? `${arity[0]}` : arity[1] === Infinity ? 'any number of' : `${arity[0]} to ${arity[1]}`;
                throw syntaxError(`${node.name} takes ${words} arguments, got ${node.args.length}`, node.offset, text);
            }
        }
        constantOf(node);
        children(node).forEach(check);
    };
    check(root);

    const valueOf = (node, row) => {
        const constant = constantOf(node);
        if (constant) return constant.value;
        switch (node.type) {
        case 'field': {
            const index = table.indexByName.get(node.name.toLowerCase());
            const value = index === undefined ? table.virtualValue(row, node.name) : row.values[index];
            const field = index === undefined ? null : table.fields[index];
            return field && value !== null && storageOf(field.type) === 'guid' ? new Guid(value) : value;
        }
        case 'negate':
            try { return arithmetic('-', 0, valueOf(node.operand, row)); } catch (message) { throw new EvaluationFailure(message, node.offset); }
        case 'binary':
            if (['+', '-', '*', '/', '%', '||'].includes(node.op)) {
                try { return arithmetic(node.op, valueOf(node.left, row), valueOf(node.right, row)); } catch (message) {
                    if (message instanceof EvaluationFailure || message instanceof RelataError) throw message;
                    throw new EvaluationFailure(message, node.offset);
                }
            }
            break;
        case 'function':
            try { return applyFunction(node.name, node.args.map((argument) => valueOf(argument, row))); } catch (message) {
                if (message instanceof EvaluationFailure || message instanceof RelataError) throw message;
                throw new EvaluationFailure(message, node.offset);
            }
        default: break;
        }
        const truth = truthOf_(node, row);
        return truth === 'unknown' ? null : truth === 'yes';
    };
    const comparison = (op, left, right, row, offset) => {
        try {
            const result = compare(valueOf(left, row), valueOf(right, row));
            return result === null ? 'unknown' : truthOf(holds(op, result));
        } catch (message) {
            if (message instanceof EvaluationFailure || message instanceof RelataError) throw message;
            throw new EvaluationFailure(message, offset);
        }
    };
    const truthOf_ = (node, row) => {
        switch (node.type) {
        case 'binary':
            if (node.op === 'AND' || node.op === 'OR') {
                // SQL's three-valued AND and OR: the deciding value wins, else unknown unless both agree.
                const deciding = node.op === 'AND' ? 'no' : 'yes';
                const left = truthOf_(node.left, row);
                if (left === deciding) return deciding;
                const right = truthOf_(node.right, row);
                if (right === deciding) return deciding;
                return left === right ? left : 'unknown';
            }
            if (comparisons[node.op]) return comparison(node.op, node.left, node.right, row, node.offset);
            break;
        case 'not': return negate(truthOf_(node.operand, row));
        case 'isNull': return truthOf((valueOf(node.operand, row) === null) !== node.negated);
        case 'in': {
            const subject = valueOf(node.operand, row);
            let truth = 'no';
            for (const item of node.list) {
                try {
                    const result = compare(subject, valueOf(item, row));
                    if (result === null) { truth = 'unknown'; continue; }
                    if (result === 0) { truth = 'yes'; break; }
                } catch (message) {
                    if (message instanceof EvaluationFailure || message instanceof RelataError) throw message;
                    throw new EvaluationFailure(message, offsetOf(node.list[0]));
                }
            }
            return node.negated ? negate(truth) : truth;
        }
        case 'like': {
            const subject = valueOf(node.operand, row);
            if (subject === null) return 'unknown';
            if (typeof subject !== 'string') throw new EvaluationFailure(`LIKE needs a string, got ${kindName(subject)} ${shown(subject)}`, node.offset);
            const pattern = valueOf(node.pattern, row);
            if (pattern === null) return 'unknown';
            if (typeof pattern !== 'string') throw new EvaluationFailure(`the LIKE pattern must be a string, got ${kindName(pattern)} ${shown(pattern)}`, node.offset);
            const truth = truthOf(likeMatcher(pattern, node.escape)(subject));
            return node.negated ? negate(truth) : truth;
        }
        case 'between': {
            const atLeast = comparison('>=', node.operand, node.low, row, 0);
            let truth;
            if (atLeast === 'no') truth = 'no';
            else {
                const atMost = comparison('<=', node.operand, node.high, row, 0);
                truth = atMost === 'no' ? 'no' : atLeast === 'yes' && atMost === 'yes' ? 'yes' : 'unknown';
            }
            return node.negated ? negate(truth) : truth;
        }
        default: break;
        }
        const value = valueOf(node, row);
        if (value === null) return 'unknown';
        if (typeof value === 'boolean') return truthOf(value);
        throw new EvaluationFailure(`the condition gives ${kindName(value)} ${shown(value)}, not TRUE or FALSE`, offsetOf(node));
    };

    const counts = visible ?? ((row) => row.state !== 'deleted' && row.state !== 'addedInEditMode');
    const result = [];
    for (const row of table.rows) {
        if (!counts(row)) continue;
        try {
            if (truthOf_(root, row) === 'yes') result.push(row);
        } catch (failure) {
            if (!(failure instanceof EvaluationFailure)) throw failure;
            throw new RelataError('expressionEvaluation', `${failure.message} in "${text}"`, { table: table.name, row: row.label, location: location(failure.offset, text) });
        }
    }
    return result;
}

function offsetOf(node) {
    if (node.offset !== undefined) return node.offset;
    const first = children(node)[0];
    return first ? offsetOf(first) : 0;
}
