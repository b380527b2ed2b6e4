// The binary row stream, frame by frame as it arrives, and every damage refused with its reason.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RowStreamDecoder } from '../relata.js';

/** A little-endian writer for hand-made streams. */
class Bytes {
    constructor() { this.parts = []; }
    u8(value) { this.parts.push(Uint8Array.of(value)); return this; }
    u32(value) { const b = new Uint8Array(4); new DataView(b.buffer).setUint32(0, value, true); this.parts.push(b); return this; }
    u64(value) { const b = new Uint8Array(8); new DataView(b.buffer).setBigUint64(0, BigInt(value), true); this.parts.push(b); return this; }
    i64(value) { const b = new Uint8Array(8); new DataView(b.buffer).setBigInt64(0, BigInt(value), true); this.parts.push(b); return this; }
    f64(value) { const b = new Uint8Array(8); new DataView(b.buffer).setFloat64(0, value, true); this.parts.push(b); return this; }
    raw(bytes) { this.parts.push(Uint8Array.from(bytes)); return this; }
    text(value) { const b = new TextEncoder().encode(value); return this.u32(b.length).raw(b); }
    json(value) { const b = new TextEncoder().encode(JSON.stringify(value)); return this.u64(b.length).raw(b); }
    get bytes() { const all = new Uint8Array(this.parts.reduce((n, p) => n + p.length, 0)); let at = 0; for (const p of this.parts) { all.set(p, at); at += p.length; } return all; }
}

function frame(kind, payload) { return new Bytes().u8(kind).u32(payload.length).raw(payload).bytes; }

const fields = [{ name: 'Id', type: 'integer' }, { name: 'Code', type: 'guid' }, { name: 'Data', type: 'blob' }, { name: 'Ok', type: 'boolean' },
    { name: 'Price', type: 'currency' }, { name: 'When', type: 'dateTime' }, { name: 'Name', type: 'string' }];

function stream() {
    const start = new Bytes().raw([...'RELATARS'].map((c) => c.charCodeAt(0))).u32(1).bytes;
    const table = frame(2, new Bytes().text('T').json(fields).u64(2).bytes);
    const nulls = (bits) => new Bytes().u64(1).u64(bits);
    const rows = new Bytes().u32(2);
    rows.raw(nulls(0).bytes).u64(2).i64(7).i64(-9007199254740991);
    rows.raw(nulls(2).bytes).u64(2).raw(Array.from({ length: 16 }, (_, i) => i * 17)).raw(new Array(16).fill(0));
    rows.raw(nulls(0).bytes).u64(2).u64(3).raw([1, 2, 255]).u64(0);
    rows.raw(nulls(1).bytes).u64(2).raw([0, 1]);
    rows.raw(nulls(0).bytes).u64(2).text('19.99').text('0.1');
    rows.raw(nulls(0).bytes).u64(2).f64(0).f64(-86400.5);
    rows.raw(nulls(0).bytes).u64(2).u32(5).u32(2).u64(7).raw([0xC3, 0xA9, 0x74, 0xC3, 0xA9]).raw([0x68, 0x69]);
    return [start, table, frame(3, rows.bytes), frame(4, new Bytes().u64(2).bytes), frame(5, new Uint8Array(0))];
}

test('every kind of column, read as the frames arrive, byte by byte', () => {
    const whole = new Bytes();
    for (const part of stream()) whole.raw(part);
    const decoder = new RowStreamDecoder();
    const frames = [];
    for (const byte of whole.bytes) frames.push(...decoder.push(Uint8Array.of(byte)));
    decoder.finish();
    assert.deepEqual(frames.map((f) => f.kind), ['table', 'rows', 'tableEnd', 'end']);
    const [first, second] = frames[1].rows;
    assert.deepEqual(first.slice(0, 2), [7, '00112233-4455-6677-8899-AABBCCDDEEFF']);
    assert.deepEqual([...first[2]], [1, 2, 255]);
    assert.equal(first[3], null, 'NULL by the bitmap');
    assert.equal(first[4], 19.99);
    assert.equal(first[5].toISOString(), '2001-01-01T00:00:00.000Z');
    assert.equal(first[6], 'été');
    assert.equal(second[0], -9007199254740991);
    assert.equal(second[1], null);
    assert.equal(second[3], true);
    assert.equal(second[5].toISOString(), '2000-12-30T23:59:59.500Z');
    assert.equal(second[6], 'hi');
});

test('a stream cut short, damaged or of another kind is refused with why', () => {
    const parts = stream();
    const cut = new RowStreamDecoder();
    cut.push(parts[0]);
    cut.push(parts[1]);
    assert.throws(() => cut.finish(), (error) => error.code === 'invalidResponse' && /cut short/.test(error.message));
    assert.throws(() => new RowStreamDecoder().push(new TextEncoder().encode('NOTRELAT\u0001\u0000\u0000\u0000')), /does not start with RELATARS/);
    const rowsFirst = new RowStreamDecoder();
    rowsFirst.push(parts[0]);
    assert.throws(() => rowsFirst.push(parts[2]), /rows come before their table/);
    const huge = new RowStreamDecoder();
    huge.push(parts[0]);
    assert.throws(() => huge.push(new Bytes().u8(3).u32(0x7fffffff).bytes), /over the 64 MiB limit/);
    const shortColumn = new RowStreamDecoder();
    shortColumn.push(parts[0]);
    shortColumn.push(parts[1]);
    assert.throws(() => shortColumn.push(frame(3, new Bytes().u32(2).u64(1).u64(0).u64(1).i64(1).bytes)), /Id has 1 values for 2 rows/);
    const unknown = new RowStreamDecoder();
    unknown.push(parts[0]);
    assert.throws(() => unknown.push(frame(9, new Uint8Array(0))), /9 is not a frame kind/);
});
