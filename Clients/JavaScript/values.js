// Field values: how the protocol's JSON carries them, and how a row holds them.
//
// A row holds each value as a rule script sees it on every other site (Documentation/Rules.md):
// integers, floats and decimals as numbers, booleans, strings, dates as `Date`, GUIDs as
// upper-case strings, blobs as `Uint8Array`, and `null`.

import { RelataError } from './errors.js';

/** @typedef {'integer'|'double'|'decimal'|'boolean'|'string'|'date'|'guid'|'blob'} Storage */

/** Whether a value is a `Date` — of this realm or of another (the rules' realm in a page). */
export function isDate(value) {
    return Object.prototype.toString.call(value) === '[object Date]';
}

/** Whether a value is bytes: an `ArrayBuffer` or a typed array, of any realm. */
export function isBytes(value) {
    return ArrayBuffer.isView(value) || Object.prototype.toString.call(value) === '[object ArrayBuffer]';
}

/** @type {Record<string, Storage>} */
const storageByType = {
    autoInc: 'integer', largeAutoInc: 'integer', integer: 'integer', smallInt: 'integer', shortInt: 'integer',
    byte: 'integer', word: 'integer', cardinal: 'integer', largeInt: 'integer', largeUInt: 'integer',
    float: 'double', singleFloat: 'double', currency: 'decimal', decimal: 'decimal', boolean: 'boolean',
    dateTime: 'date', guid: 'guid', blob: 'blob',
    xml: 'string', string: 'string', fixedChar: 'string', memo: 'string', wideString: 'string',
    fixedWideChar: 'string', wideMemo: 'string',
};

/** The integer types' ranges (as the server's; beyond 2^53 a JavaScript number is not exact). */
const integerRanges = {
    shortInt: [-128, 127], byte: [0, 255], smallInt: [-32768, 32767], word: [0, 65535],
    integer: [-2147483648, 2147483647], autoInc: [-2147483648, 2147483647], cardinal: [0, 4294967295],
    largeInt: [-Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
    largeAutoInc: [-Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER], largeUInt: [0, Number.MAX_SAFE_INTEGER],
};

/**
 * The kind of value a field of a type holds.
 * @param {string} type a field type of the schema (`autoInc`, `currency`, `dateTime`, …)
 * @returns {Storage}
 */
export function storageOf(type) {
    const storage = storageByType[type];
    if (!storage) throw new RelataError('invalidSchema', `'${type}' is not a field type`);
    return storage;
}

const guidPattern = /^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$/;

/**
 * ISO 8601 text as a date, read as the server reads it: a date alone is midnight UTC, a time
 * without an offset is UTC (never the browser's time zone); null when it is not such a date.
 * @param {string} text
 */
export function parseDate(text) {
    const match = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)(Z|[+-]\d{2}:?\d{2})?)?$/i.exec(String(text).trim());
    if (!match) return null;
    const date = new Date(`${match[1]}T${match[2] ?? '00:00:00'}${(match[3] ?? 'Z').toUpperCase()}`);
    return Number.isNaN(date.getTime()) ? null : date;
}

/** Base64 to bytes, in a browser and in Node alike. */
export function bytesFromBase64(text) {
    const binary = atob(text);
    const bytes = new Uint8Array(binary.length);
    for (let index = 0; index < binary.length; index++) bytes[index] = binary.charCodeAt(index);
    return bytes;
}

/** Bytes to Base64. */
export function base64FromBytes(bytes) {
    let binary = '';
    for (let start = 0; start < bytes.length; start += 0x8000) {
        binary += String.fromCharCode.apply(null, bytes.subarray(start, start + 0x8000));
    }
    return btoa(binary);
}

/**
 * A date as the protocol writes it: ISO 8601 in UTC, fractions only when there are any.
 * @param {Date} date
 */
export function isoString(date) {
    const text = date.toISOString();
    return text.endsWith('.000Z') ? text.slice(0, -5) + 'Z' : text.replace(/0+Z$/, 'Z');
}

/**
 * A value of a GetData answer's JSON rows (plain JSON, read by the field's type) as a row holds it.
 * @param {unknown} json
 * @param {{name: string, type: string}} field
 */
export function fromPlainJSON(json, field) {
    if (json === null || json === undefined) return null;
    switch (storageOf(field.type)) {
    case 'date': return parseDate(String(json)) ?? new Date(String(json));
    case 'blob': return bytesFromBase64(String(json));
    case 'guid': return String(json).toUpperCase();
    default: return json;
    }
}

/**
 * A tagged value of a delta or a parameter (`{"integer": 7}`, `{"date": "…"}`, `null`) as a row holds it.
 * @param {unknown} tagged
 */
export function fromTagged(tagged) {
    if (tagged === null || tagged === undefined) return null;
    if (typeof tagged !== 'object') throw new RelataError('invalidResponse', `${JSON.stringify(tagged)} is not a tagged value`);
    const [tag] = Object.keys(tagged);
    const content = tagged[tag];
    switch (tag) {
    case 'integer': case 'double': case 'boolean': case 'string': return content;
    case 'decimal': return Number(content);
    case 'date': return typeof content === 'number' ? new Date(Date.UTC(2001, 0, 1) + content * 1000) : new Date(content);
    case 'guid': return String(content).toUpperCase();
    case 'blob': return bytesFromBase64(content);
    default: throw new RelataError('invalidResponse', `'${tag}' is not a value's tag`);
    }
}

/**
 * A value as the protocol's tagged JSON, by the field's type (a checked value: see `checkValue`).
 * @param {unknown} value
 * @param {{name: string, type: string}} field
 */
export function toTagged(value, field) {
    if (value === null || value === undefined) return null;
    switch (storageOf(field.type)) {
    case 'integer': return { integer: value };
    case 'double': return { double: value };
    case 'decimal': return { decimal: String(value) };
    case 'boolean': return { boolean: value };
    case 'string': return { string: value };
    case 'date': return { date: isoString(value) };
    case 'guid': return { guid: value };
    case 'blob': return { blob: base64FromBytes(value) };
    }
    return null;
}

/**
 * A value a user or a rule writes to a field, checked and converted as the server's tables do:
 * an integral number for an integer field within its type's range, a finite number for a float or
 * decimal, a boolean, a string without NUL, a `Date` (or ISO 8601 text) for a date, a GUID (or its
 * text), a `Uint8Array` (or an `ArrayBuffer` or Base64 text) for a blob.
 * @param {unknown} value
 * @param {{name: string, type: string}} field
 * @param {string} table
 * @returns {unknown} the value as the row holds it
 */
export function checkValue(value, field, table) {
    if (value === null || value === undefined) {
        if (field.required) throw new RelataError('requiredValueMissing', 'the field is required and cannot be NULL', { table, field: field.name });
        return null;
    }
    const storage = storageOf(field.type);
    const mismatch = () => new RelataError('typeMismatch', `${valueText(value)} (${kindName(value)}) is not a valid ${field.type} value`, { table, field: field.name });
    switch (storage) {
    case 'integer': {
        const number = typeof value === 'string' && /^\s*[-+]?\d+\s*$/.test(value) ? Number(value) : value;
        if (typeof number !== 'number' || !Number.isInteger(number)) throw mismatch();
        const [low, high] = integerRanges[field.type];
        if (number < low || number > high) {
            throw new RelataError('valueOutOfRange', `${number} is out of range for ${field.type} (${low}...${high})`, { table, field: field.name });
        }
        return number === 0 ? 0 : number;
    }
    case 'double': case 'decimal': {
        const number = typeof value === 'string' && value.trim() !== '' && /^[-+0-9.eE\s]+$/.test(value) ? Number(value) : value;
        if (typeof number !== 'number') throw mismatch();
        if (!Number.isFinite(number)) {
            const name = Number.isNaN(number) ? 'NaN' : number > 0 ? 'Infinity' : '-Infinity';
            throw new RelataError('valueOutOfRange', `${name} is not a number a ${field.type} field can hold`, { table, field: field.name });
        }
        const stored = field.type === 'singleFloat' ? Math.fround(number) : number;
        if (storage === 'decimal') {
            if (!fitsDecimal(stored)) throw mismatch();
            checkDigits(stored, field, table);
        }
        return stored === 0 ? 0 : stored;
    }
    case 'boolean':
        if (typeof value !== 'boolean') throw mismatch();
        return value;
    case 'string': {
        if (typeof value !== 'string') throw mismatch();
        if (value.includes('\u0000')) {
            throw new RelataError('typeMismatch', 'text holding NUL (U+0000) cannot be stored: SQL databases end text there', { table, field: field.name });
        }
        const length = characterCount(value);
        if (field.size && field.size > 0 && length > field.size) {
            throw new RelataError('valueTooLong', `value is ${length} characters, the field allows ${field.size}`, { table, field: field.name });
        }
        return value;
    }
    case 'date': {
        const date = isDate(value) ? value : typeof value === 'string' ? parseDate(value) : null;
        if (!date || Number.isNaN(date.getTime())) throw mismatch();
        return new Date(Math.round(date.getTime()));
    }
    case 'guid': {
        if (typeof value !== 'string') throw mismatch();
        const bare = value.startsWith('{') && value.endsWith('}') ? value.slice(1, -1) : value;
        if (!guidPattern.test(bare)) throw mismatch();
        return bare.toUpperCase();
    }
    case 'blob': {
        const bytes = blobOf(value, mismatch);
        if (field.size && field.size > 0 && bytes.length > field.size) {
            throw new RelataError('valueTooLong', `value is ${bytes.length} bytes, the field allows ${field.size}`, { table, field: field.name });
        }
        return bytes;
    }
    }
    throw mismatch();
}

/** Bytes a value gives, as a copy. */
function blobOf(value, mismatch) {
    {
        if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer.slice(value.byteOffset, value.byteOffset + value.byteLength));
        if (isBytes(value)) return new Uint8Array(value.slice(0));
        if (typeof value === 'string') {
            try { return bytesFromBase64(value.trim()); } catch { throw mismatch(); }
        }
        throw mismatch();
    }
}

/** Characters as the server counts them: user-perceived characters (grapheme clusters). */
const graphemes = typeof Intl === 'object' && Intl.Segmenter ? new Intl.Segmenter('en', { granularity: 'grapheme' }) : null;
function characterCount(text) {
    if (/^[\x00-\x7f]*$/.test(text)) return text.length;
    return graphemes ? [...graphemes.segment(text)].length : [...text].length;
}

/**
 * Whether a number has a decimal value on the server: its shortest digits, read as Swift's
 * `Decimal` reads them, need a power of ten from 10^-128 to 10^127 (1e128 and 1e-129 have none).
 */
function fitsDecimal(number) {
    const [mantissa, exponent] = Math.abs(number).toExponential().split('e');
    const power = Number(exponent) - (mantissa.replace('.', '').length - 1);
    return power >= -128 && power <= 127;
}

/** A decimal's digits against the field's precision and scale, as the server checks them. */
function checkDigits(number, field, table) {
    const precision = field.precision ?? 0, scale = field.scale ?? 0;
    if (precision <= 0 && scale <= 0) return;
    const text = decimalText(Math.abs(number));
    const [whole, fraction = ''] = text.split('.');
    const integerDigits = whole === '0' ? 0 : whole.length;
    if (scale > 0 && fraction.length > scale) {
        throw new RelataError('valueOutOfRange', `${decimalText(number)} has ${fraction.length} decimal places, the field allows ${scale}`, { table, field: field.name });
    }
    if (precision > 0 && integerDigits > precision - scale) {
        throw new RelataError('valueOutOfRange', `${decimalText(number)} has ${integerDigits} integer digits, the field allows ${precision - scale} (precision ${precision}, scale ${scale})`, { table, field: field.name });
    }
}

/** A number's digits without an exponent (what a decimal's text shows). */
function decimalText(number) {
    const text = String(number);
    if (!/e/i.test(text)) return text;
    return number.toFixed(20).replace(/\.?0+$/, '');
}

const booleanWords = { true: true, yes: true, 1: true, t: true, y: true, false: false, no: false, 0: false, f: false, n: false };

/**
 * A value of an edits or data file (plain JSON) read by the field's type, as the server reads
 * one: text is parsed (`'many'` is not an integer; `'yes'` is true; a date in ISO 8601), numbers
 * are checked. Errors name the field.
 * @param {unknown} raw
 * @param {{name: string, type: string}} field
 */
export function valueFromJSON(raw, field, table) {
    const unparsable = (text) => new RelataError('typeMismatch', `'${text}' is not a valid ${field.type} value`, { table, field: field.name });
    if (raw === null || raw === undefined) return null;
    if (Array.isArray(raw) || typeof raw === 'object') {
        throw new RelataError('typeMismatch', `a JSON array or object is not a valid ${field.type} value`, { table, field: field.name });
    }
    // A number beyond a decimal's powers of ten is refused as its text is, as the server reads JSON's digits.
    if (typeof raw === 'number' && storageOf(field.type) === 'decimal' && Number.isFinite(raw) && !fitsDecimal(raw)) throw unparsable(String(raw));
    if (typeof raw !== 'string') return raw;
    const trimmed = raw.trim();
    switch (storageOf(field.type)) {
    case 'string': return raw;
    case 'integer':
        if (!/^[-+]?\d+$/.test(trimmed)) throw unparsable(raw);
        return Number(trimmed);
    case 'double':
        if (trimmed === '' || Number.isNaN(Number(trimmed)) && !/^[-+]?(nan|inf(inity)?)$/i.test(trimmed)) throw unparsable(raw);
        return /^[-+]?inf/i.test(trimmed) ? (trimmed.startsWith('-') ? -Infinity : Infinity) : Number(trimmed);
    case 'decimal':
        if (trimmed === '' || !/^[0-9.\-+eE]+$/.test(trimmed) || Number.isNaN(Number(trimmed)) || !fitsDecimal(Number(trimmed))) throw unparsable(raw);
        return Number(trimmed);
    case 'boolean': {
        const word = booleanWords[trimmed.toLowerCase()];
        if (word === undefined) throw unparsable(raw);
        return word;
    }
    case 'date': {
        const date = parseDate(trimmed);
        if (!date) throw unparsable(raw);
        return date;
    }
    case 'guid': {
        const bare = trimmed.startsWith('{') && trimmed.endsWith('}') ? trimmed.slice(1, -1) : trimmed;
        if (!guidPattern.test(bare)) throw unparsable(raw);
        return bare.toUpperCase();
    }
    case 'blob':
        try { return bytesFromBase64(trimmed); } catch { throw unparsable(raw); }
    }
    return raw;
}

/**
 * Whether two values a row holds are the same value (dates by time, blobs by bytes).
 * @param {unknown} a
 * @param {unknown} b
 */
export function sameValue(a, b) {
    if (a === b) return true;
    if (a === null || b === null || a === undefined || b === undefined) return false;
    if (isDate(a) && isDate(b)) return a.getTime() === b.getTime();
    if (ArrayBuffer.isView(a) && ArrayBuffer.isView(b)) {
        if (a.length !== b.length) return false;
        for (let index = 0; index < a.length; index++) if (a[index] !== b[index]) return false;
        return true;
    }
    return typeof a === 'number' && typeof b === 'number' && Number.isNaN(a) && Number.isNaN(b);
}

/** A copy of a value, so no caller changes what a row holds. */
export function copyValue(value) {
    if (isDate(value)) return new Date(value.getTime());
    if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer.slice(value.byteOffset, value.byteOffset + value.byteLength));
    return value;
}

/** The kind of value the server would make of a JavaScript value (as messages name it). */
export function kindName(value) {
    if (value === null || value === undefined) return 'NULL';
    if (typeof value === 'number') return Number.isInteger(value) && Math.abs(value) <= 2 ** 53 ? 'integer' : 'double';
    if (typeof value === 'boolean') return 'boolean';
    if (typeof value === 'string') return 'string';
    if (isDate(value)) return 'date';
    if (isBytes(value)) return 'blob';
    return 'object';
}

/** A value as the server's messages show it: strings in single quotes, dates in ISO 8601, blobs by size. */
export function valueText(value) {
    if (value === null || value === undefined) return 'NULL';
    if (typeof value === 'string') return `'${value}'`;
    if (typeof value === 'number' && kindName(value) === 'double' && Number.isInteger(value)) return value.toFixed(1);
    if (isDate(value)) return Number.isNaN(value.getTime()) ? 'an invalid date' : isoString(value);
    if (isBytes(value)) return `<${value.byteLength} bytes>`;
    if (typeof value === 'object') {
        try { return JSON.stringify(value).slice(0, 60); } catch { return 'an object'; }
    }
    return String(value);
}

/** A value as a message shows it. */
export function describe(value) {
    if (isDate(value)) return Number.isNaN(value.getTime()) ? 'an invalid date' : isoString(value);
    if (ArrayBuffer.isView(value)) return `${value.byteLength} bytes`;
    if (typeof value === 'string') return `'${value.length > 60 ? value.slice(0, 60) + '…' : value}'`;
    if (typeof value === 'object') {
        try { return JSON.stringify(value).slice(0, 60); } catch { return 'an object'; }
    }
    return String(value);
}
