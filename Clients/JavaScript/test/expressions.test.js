// The where-expression language in the page: grammar, NULL logic, operators, functions, errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DataTable } from '../relata.js';
import { parseExpression, rowsWhere } from '../expressions.js';

function products() {
    const table = new DataTable('Products', [
        { name: 'Id', type: 'integer', primaryKey: true }, { name: 'Name', type: 'string' }, { name: 'Price', type: 'currency' },
        { name: 'Added', type: 'dateTime' }, { name: 'Code', type: 'guid' }, { name: 'Active', type: 'boolean' },
    ]);
    table.load([
        [1, 'Apple', 1.5, new Date('2026-01-15T00:00:00Z'), 'E621E1F8-C36C-495A-93FC-0C247A3E6E5F', true],
        [2, 'banana', null, new Date('2026-03-01T12:00:00Z'), null, false],
        [3, 'Cherry 100%', 12, null, '11111111-2222-3333-4444-555555555555', null],
        [4, 'Ünïcode 😀', 7, new Date('2025-12-31T23:59:59Z'), null, true],
    ]);
    return table;
}
const ids = (text, parameters) => rowsWhere(products(), text, parameters).map((row) => row.get('Id'));

test('comparisons, AND, OR, NOT and SQL\'s NULL logic', () => {
    assert.deepEqual(ids('Price > 2'), [3, 4]);
    assert.deepEqual(ids('NOT Price > 2'), [1], 'NOT unknown is unknown: the NULL price is not kept');
    assert.deepEqual(ids('Price > 2 OR Active = TRUE'), [1, 3, 4]);
    assert.deepEqual(ids('Price = NULL'), [], 'x = NULL is never true');
    assert.deepEqual(ids('Price IS NULL'), [2]);
    assert.deepEqual(ids('Price IS NOT NULL AND Active'), [1, 4]);
    assert.deepEqual(ids('Id NOT IN (1, NULL)'), [], 'x NOT IN (…, NULL) is never true');
    assert.deepEqual(ids('Id IN (1, 3, NULL)'), [1, 3]);
    assert.deepEqual(ids('Price BETWEEN 1 AND 7'), [1, 4]);
    assert.deepEqual(ids('Price NOT BETWEEN 1 AND 7'), [3]);
    assert.deepEqual(ids('Id = 2 OR Price > 100 AND Active'), [2], 'AND binds tighter than OR');
});

test('strings compare by code point; LIKE ignores case and honours ESCAPE; + and || join', () => {
    assert.deepEqual(ids("Name < 'b'"), [1, 3], "by code point 'C' < 'a' < 'b' < 'Ü'");
    assert.deepEqual(ids("Name LIKE 'A%'"), [1]);
    assert.deepEqual(ids("Name LIKE '%100!%' ESCAPE '!'"), [3]);
    assert.deepEqual(ids("Name LIKE 'b_nana'"), [2]);
    assert.deepEqual(ids("Name LIKE 'ü%'"), [4]);
    assert.deepEqual(ids("Name || '!' = 'Apple!'"), [1]);
    assert.deepEqual(ids("Name + Id = 'Apple1'"), [1]);
    assert.deepEqual(ids("Name = 'it''s'"), []);
});

test('arithmetic, functions and parameters', () => {
    assert.deepEqual(ids('Price * 2 = 3'), [1]);
    assert.deepEqual(ids('Id / 2 = 1.5'), [3]);
    assert.deepEqual(ids('Id % 2 = 0'), [2, 4]);
    assert.deepEqual(ids('Id / 0 IS NULL'), [1, 2, 3, 4], 'division by zero gives NULL');
    assert.deepEqual(ids('-Id = -2'), [2]);
    assert.deepEqual(ids("UPPER(Name) = 'BANANA' OR LENGTH(Name) = 11"), [2, 3]);
    assert.deepEqual(ids("SUBSTRING(Name, 2, 3) = 'ppl'"), [1]);
    assert.deepEqual(ids('ROUND(Price) = 2'), [1]);
    assert.deepEqual(ids('COALESCE(Price, 0) = 0'), [2]);
    assert.deepEqual(ids('YEAR(Added) = 2026 AND MONTH(Added) = 3 AND DAY(Added) = 1'), [2]);
    assert.deepEqual(ids('Price >= :min AND Name <> :skip', { min: 5, skip: 'Cherry 100%' }), [4]);
    assert.deepEqual(ids('Added < :when', { when: new Date('2026-01-01T00:00:00Z') }), [4]);
});

test('a string compared with a date or GUID field is read as one', () => {
    assert.deepEqual(ids("Added >= '2026-01-15'"), [1, 2]);
    assert.deepEqual(ids("Added < '2026-01-01T00:00:00'"), [4], 'a time without an offset is UTC');
    assert.deepEqual(ids("Code = 'e621e1f8-c36c-495a-93fc-0c247a3e6e5f'"), [1]);
    assert.deepEqual(ids("Code = '{11111111-2222-3333-4444-555555555555}'"), [3]);
    assert.throws(() => ids("Added > 'soon'"), (error) => error.code === 'expressionEvaluation' && /'soon' is not a date/.test(error.message) && error.row === 'row (Id=1)');
});

test('fields by any spelling: quoted, bracketed, case-insensitive; keywords too', () => {
    assert.deepEqual(ids('"price" > 10 and [ID] = 3'), [3]);
    assert.deepEqual(ids('id in (1,2) AnD nOt active'), [2]);
});

test('errors name the place, the table, the row and what was given', () => {
    assert.throws(() => ids('Price >'), (error) => error.code === 'expressionSyntax' && error.location === 'column 8'
        && error.message === 'unexpected the end of the expression; expected a value, a field or \'(\' in "Price >"');
    assert.throws(() => ids("Name = 'open"), (error) => error.code === 'expressionSyntax' && /not closed/.test(error.message) && error.location === 'column 8');
    assert.throws(() => ids('Prize > 1'), (error) => error.code === 'unknownField' && error.field === 'Prize'
        && error.message.startsWith("table Products has no field 'Prize' (its fields: Id, Name, Price, Added, Code, Active)"));
    assert.throws(() => ids('Price > :min', { max: 1 }), (error) => error.code === 'expressionEvaluation' && /no value was given for parameter :min \(given: :max\)/.test(error.message));
    assert.throws(() => ids("Name > 3"), (error) => error.code === 'expressionEvaluation' && error.row === 'row (Id=1)' && error.location === 'column 6'
        && /cannot compare string 'Apple' with integer 3/.test(error.message));
    assert.throws(() => ids('Price'), (error) => error.code === 'expressionEvaluation' && /the condition gives double 1.5, not TRUE or FALSE/.test(error.message));
    assert.throws(() => ids('NOPE(Name)'), (error) => error.code === 'expressionSyntax' && /unknown function NOPE/.test(error.message));
    assert.throws(() => ids('ROUND()'), (error) => error.code === 'expressionSyntax' && /ROUND takes 1 to 2 arguments, got 0/.test(error.message));
    assert.throws(() => ids(''), (error) => error.code === 'expressionSyntax' && /empty/.test(error.message));
    assert.throws(() => ids('Id = 1 $'), (error) => error.code === 'expressionSyntax' && /unexpected character '\$'/.test(error.message));
});

test('no expression can exhaust the stack: nesting is limited', () => {
    assert.throws(() => parseExpression('('.repeat(65) + '1' + ')'.repeat(65)), /nests more than 64/);
    assert.throws(() => parseExpression('NOT '.repeat(100) + 'TRUE'), /nests more than 64/);
    assert.throws(() => parseExpression(Array.from({ length: 300 }, () => 'Id = 1').join(' OR ')), /nests more than 256 levels/);
    assert.doesNotThrow(() => parseExpression(Array.from({ length: 200 }, () => 'Id = 1').join(' OR ')));
});

test('deleted rows and rows added in edit mode are never matched; an edited row by its values before edit()', () => {
    const table = products();
    table.rows[0].remove();
    table.addRow({ Id: 9 }, { inEditMode: true });
    table.rows[1].edit();
    table.rows[1].set('Name', 'Apple');
    assert.deepEqual(rowsWhere(table, "Id > 0").map((row) => row.get('Id')), [2, 3, 4]);
    assert.deepEqual(rowsWhere(table, "Name = 'banana'").map((row) => row.get('Id')), [2]);
});
