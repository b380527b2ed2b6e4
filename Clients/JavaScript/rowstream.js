// The binary row stream (`application/vnd.relata.rows`, Documentation/Protocol.md): frames read
// as they arrive, each `rows` frame column by column into the values a row holds.

import { RelataError } from './errors.js';
import { storageOf } from './values.js';

const magic = 'RELATARS';
const maxFrameBytes = 64 << 20;
const referenceDate = Date.UTC(2001, 0, 1);
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Frame kinds. */
export const FrameKind = Object.freeze({ schema: 1, table: 2, rows: 3, tableEnd: 4, end: 5, error: 6 });

function damaged(what) {
    return new RelataError('invalidResponse', `the row stream is damaged: ${what}`);
}

/** Reads little-endian numbers and strings from one frame's payload, checking every length. */
class PayloadReader {
    constructor(bytes) {
        this.bytes = bytes;
        this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
        this.offset = 0;
    }

    need(count, what) {
        if (count < 0 || this.offset + count > this.bytes.length) throw damaged(`${what} runs past the end of its frame`);
    }

    u8(what) { this.need(1, what); return this.bytes[this.offset++]; }
    u32(what) { this.need(4, what); const value = this.view.getUint32(this.offset, true); this.offset += 4; return value; }

    /** A u64 that must be a safe count or length. */
    count(what) {
        this.need(8, what);
        const low = this.view.getUint32(this.offset, true), high = this.view.getUint32(this.offset + 4, true);
        this.offset += 8;
        if (high > 0x1FFFFF) throw damaged(`${what} is too large`);
        return high * 0x100000000 + low;
    }

    i64(what) {
        this.need(8, what);
        const value = this.view.getBigInt64(this.offset, true);
        this.offset += 8;
        return value;
    }

    f64(what) { this.need(8, what); const value = this.view.getFloat64(this.offset, true); this.offset += 8; return value; }

    bytesOf(length, what) {
        this.need(length, what);
        const slice = this.bytes.subarray(this.offset, this.offset + length);
        this.offset += length;
        return slice;
    }

    string(what) {
        const length = this.u32(what);
        try { return utf8.decode(this.bytesOf(length, what)); } catch (error) {
            if (error instanceof RelataError) throw error;
            throw damaged(`${what} is not UTF-8`);
        }
    }

    /** JSON after a u64 length. */
    json(what) {
        const length = this.count(what);
        let text;
        try { text = utf8.decode(this.bytesOf(length, what)); } catch (error) {
            if (error instanceof RelataError) throw error;
            throw damaged(`${what} is not UTF-8`);
        }
        try { return JSON.parse(text); } catch { throw damaged(`${what} is not JSON`); }
    }
}

/** One column of a rows frame: `count` values, NULL where the bitmap says so. */
function readColumn(reader, count, field) {
    const words = reader.count(`${field.name}'s NULL bitmap`);
    if (words !== Math.ceil(count / 64)) throw damaged(`${field.name}'s NULL bitmap has ${words} words for ${count} rows`);
    const nullBits = reader.bytesOf(words * 8, `${field.name}'s NULL bitmap`);
    const isNull = (row) => (nullBits[(row >> 6) * 8 + ((row & 63) >> 3)] >> (row & 7)) & 1;
    const elementCount = () => {
        const elements = reader.count(`${field.name}'s values`);
        if (elements !== count) throw damaged(`${field.name} has ${elements} values for ${count} rows`);
    };
    const values = new Array(count);
    /** One element per row, read whether the row is NULL or not, made a value where it is not. */
    const eachRow = (read, make) => {
        elementCount();
        for (let row = 0; row < count; row++) {
            const element = read();
            values[row] = isNull(row) ? null : make(element);
        }
    };
    switch (storageOf(field.type)) {
    case 'integer':
        eachRow(() => reader.i64(field.name), Number);
        break;
    case 'double':
        eachRow(() => reader.f64(field.name), (number) => number);
        break;
    case 'date':
        eachRow(() => reader.f64(field.name), (seconds) => new Date(referenceDate + Math.round(seconds * 1e6) / 1e3));
        break;
    case 'boolean':
        eachRow(() => {
            const byte = reader.u8(field.name);
            if (byte > 1) throw damaged(`a boolean of ${field.name} is ${byte}`);
            return byte === 1;
        }, (bool) => bool);
        break;
    case 'decimal':
        eachRow(() => reader.string(field.name), Number);
        break;
    case 'string': {
        elementCount();
        const lengths = [];
        for (let row = 0; row < count; row++) lengths.push(reader.u32(field.name));
        const total = reader.count(`${field.name}'s text`);
        const block = reader.bytesOf(total, `${field.name}'s text`);
        let start = 0;
        for (let row = 0; row < count; row++) {
            const end = start + lengths[row];
            if (end > block.length) throw damaged(`${field.name}'s lengths run past its text`);
            if (isNull(row)) values[row] = null;
            else {
                try { values[row] = utf8.decode(block.subarray(start, end)); } catch { throw damaged(`a ${field.name} is not UTF-8`); }
            }
            start = end;
        }
        if (start !== block.length) throw damaged(`${field.name}'s lengths do not add up to its text`);
        break;
    }
    case 'guid':
        eachRow(() => reader.bytesOf(16, field.name), guidText);
        break;
    case 'blob':
        eachRow(() => reader.bytesOf(reader.count(field.name), field.name), (bytes) => new Uint8Array(bytes));
        break;
    }
    return values;
}

function guidText(bytes) {
    const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('').toUpperCase();
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * Reads a row stream as its bytes arrive: `push` each chunk, and get back the frames it completed.
 *
 * @example
 * const decoder = new RowStreamDecoder();
 * for await (const chunk of response.body) for (const frame of decoder.push(chunk)) handle(frame);
 * decoder.finish();   // throws when the stream was cut short
 */
export class RowStreamDecoder {
    constructor() {
        this.buffer = new Uint8Array(0);
        this.started = false;
        this.ended = false;
        /** @type {{name: string, fields: object[]}|null} */
        this.table = null;
    }

    /**
     * @param {Uint8Array} chunk
     * @returns {Array<{kind: 'schema', schema: object}|{kind: 'table', name: string, fields: object[], expectedRows: number}|
     *                 {kind: 'rows', rows: unknown[][]}|{kind: 'tableEnd', rows: number}|{kind: 'end'}|{kind: 'error', error: object}>}
     */
    push(chunk) {
        if (this.ended && chunk.length > 0) throw damaged('bytes follow its end');
        const joined = new Uint8Array(this.buffer.length + chunk.length);
        joined.set(this.buffer);
        joined.set(chunk, this.buffer.length);
        this.buffer = joined;
        const frames = [];
        let offset = 0;
        if (!this.started) {
            if (this.buffer.length < 12) return frames;
            const head = String.fromCharCode(...this.buffer.subarray(0, 8));
            if (head !== magic) throw damaged('it does not start with RELATARS');
            const version = new DataView(this.buffer.buffer, this.buffer.byteOffset + 8, 4).getUint32(0, true);
            if (version !== 1) throw damaged(`its version is ${version}, not 1`);
            this.started = true;
            offset = 12;
        }
        while (!this.ended && this.buffer.length - offset >= 5) {
            const kind = this.buffer[offset];
            const length = new DataView(this.buffer.buffer, this.buffer.byteOffset + offset + 1, 4).getUint32(0, true);
            if (length > maxFrameBytes) throw damaged(`a frame of ${length} bytes is over the 64 MiB limit`);
            if (this.buffer.length - offset - 5 < length) break;
            const payload = this.buffer.subarray(offset + 5, offset + 5 + length);
            offset += 5 + length;
            frames.push(this.frame(kind, new PayloadReader(payload)));
        }
        this.buffer = this.buffer.slice(offset);
        return frames;
    }

    /** Ends reading: throws when the stream stopped before its `end` or `error` frame. */
    finish() {
        if (!this.ended) throw new RelataError('invalidResponse', 'the answer was cut short before its end (a transient failure: try again)');
    }

    frame(kind, reader) {
        switch (kind) {
        case FrameKind.schema: return { kind: 'schema', schema: reader.json('the schema') };
        case FrameKind.table: {
            const name = reader.string('a table name');
            const fields = reader.json(`${name}'s fields`);
            if (!Array.isArray(fields)) throw damaged(`${name}'s fields are not a list`);
            const expectedRows = reader.count('the expected rows');
            this.table = { name, fields };
            return { kind: 'table', name, fields, expectedRows };
        }
        case FrameKind.rows: {
            if (!this.table) throw damaged('rows come before their table');
            const count = reader.u32('a row count');
            const columns = this.table.fields.map((field) => readColumn(reader, count, field));
            if (reader.offset !== reader.bytes.length) throw damaged(`${this.table.name}'s rows frame has bytes left over`);
            const rows = new Array(count);
            for (let row = 0; row < count; row++) rows[row] = columns.map((column) => column[row]);
            return { kind: 'rows', rows };
        }
        case FrameKind.tableEnd:
            this.table = null;
            return { kind: 'tableEnd', rows: reader.count('the rows sent') };
        case FrameKind.end:
            this.ended = true;
            return { kind: 'end' };
        case FrameKind.error:
            this.ended = true;
            return { kind: 'error', error: reader.json('the error') };
        default:
            throw damaged(`${kind} is not a frame kind`);
        }
    }
}
