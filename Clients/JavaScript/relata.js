// Relata's JavaScript client: the protocol, tables whose rows track their changes, and the
// schema's rule scripts running in the page as rows change. A plain ES module, no build step:
//
//   import { RelataClient } from '/client/relata.js';      // served by `relata serve`
//
// Documentation/JavaScript.md shows it in a page.

export { RelataClient } from './client.js';
export { DataTable, DataRow } from './table.js';
export { RelataError, scriptLocation } from './errors.js';
export { RowStreamDecoder } from './rowstream.js';
export { RuleSet, rowEvents } from './rules.js';
export { checkValue, fromTagged, toTagged, storageOf, sameValue, parseDate } from './values.js';
export { rowsWhere } from './expressions.js';
export { EditRun, editSummary } from './edits.js';
