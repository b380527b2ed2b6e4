// Tables whose rows track their changes, and the rules that run as they change (no server).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DataTable, RuleSet, RelataError } from '../relata.js';

const fields = [
    { name: 'OrderId', type: 'autoInc', primaryKey: true },
    { name: 'Status', type: 'string', size: 10, required: true },
    { name: 'Quantity', type: 'integer' },
    { name: 'Price', type: 'currency' },
    { name: 'Touches', type: 'integer', defaultValue: 0 },
];

const script = `
function onNewRow(row) { row.Status = 'open'; row.Quantity = 1; }
function beforePost(row) {
    if (row.Quantity <= 0) fail('Quantity must be positive, got ' + row.Quantity);
    row.Touches = row.Touches + 1;
}
function beforeUpdate(row, old) {
    if (old.Status === 'shipped') fail({ code: 7, why: 'shipped' });
}
function beforeDelete(row) { if (row.Status === 'open') missing.call(); }
`;

function orders({ withRules = true } = {}) {
    const table = new DataTable('Orders', fields);
    table.load([[1, 'open', 2, 9.5, 0], [2, 'shipped', 1, 20, 0]]);
    if (withRules) {
        const schema = { name: 'Shop', tables: [{ name: 'Orders', fields, script: { name: 'Orders.js', source: script } }] };
        table.rules = new RuleSet(schema, { session: { values: { UserId: 7 }, roles: ['Sales'] }, tables: () => new Map([['orders', table]]) });
    }
    return table;
}

test('a direct write is posted at once: rules run, the row is modified, the edit is the user\'s value only', () => {
    const table = orders();
    const row = table.rows[0];
    row.set('Quantity', 5);
    assert.equal(row.get('Quantity'), 5);
    assert.equal(row.get('Touches'), 1, 'beforePost ran once');
    assert.equal(row.state, 'modified');
    assert.equal(row.original('Quantity'), 2);
    assert.deepEqual(row.edits.map((edit) => [edit.kind, edit.values]), [['update', { Quantity: 5 }]]);
});

test('a refusal leaves the row exactly as it was, and names the script line', () => {
    const table = orders();
    const row = table.rows[0];
    assert.throws(() => row.set('Quantity', 0), (error) => {
        assert.ok(error instanceof RelataError);
        assert.equal(error.code, 'refused');
        assert.equal(error.message, 'Quantity must be positive, got 0');
        assert.equal(error.event, 'beforePost');
        assert.equal(error.table, 'Orders');
        assert.equal(error.row, 'row (OrderId=1)');
        assert.equal(error.file, 'Orders.js');
        assert.equal(error.line, 4);
        return true;
    });
    assert.equal(row.get('Quantity'), 2);
    assert.equal(row.get('Touches'), 0, 'what the rule wrote before failing is gone');
    assert.equal(row.state, 'unchanged');
    assert.deepEqual(row.edits, []);
    assert.equal(row.isEditing, false);
});

test('after edit(), a refused post keeps the row in edit mode with what the user typed', () => {
    const row = orders().rows[0];
    row.edit();
    row.set('Quantity', -3);
    row.set('Status', 'held');
    assert.throws(() => row.post(), /Quantity must be positive, got -3/);
    assert.equal(row.isEditing, true);
    assert.equal(row.get('Quantity'), -3);
    assert.equal(row.get('Status'), 'held');
    assert.equal(row.get('Touches'), 0);
    row.set('Quantity', 4);
    row.post();
    assert.deepEqual(row.edits.map((edit) => edit.values), [{ Quantity: 4, Status: 'held' }]);
});

test('fail() with an object shows it as JSON; a broken rule is a ruleError with its line', () => {
    const table = orders();
    assert.throws(() => table.rows[1].set('Quantity', 3), (error) => error.code === 'refused' && error.message === '{"code":7,"why":"shipped"}' && error.line === 8);
    assert.throws(() => table.rows[0].remove(), (error) => error.code === 'ruleError' && /missing is not defined/.test(error.message) && error.line === 10 && error.event === 'beforeDelete');
    assert.equal(table.rows[0].state, 'unchanged', 'a refused delete keeps the row');
});

test('addRow: onNewRow first, then the given values over it, then the checks; a refusal cancels the addition', () => {
    const table = orders();
    const row = table.addRow({ Quantity: 3 });
    assert.equal(row.state, 'added');
    assert.equal(row.get('Status'), 'open');
    assert.equal(row.get('Quantity'), 3);
    assert.ok(row.get('OrderId') < 0, 'a temporary key');
    assert.deepEqual(row.edits.map((edit) => [edit.kind, edit.values]), [['insert', { Quantity: 3 }]]);
    assert.throws(() => table.addRow({ Quantity: 0 }), /Quantity must be positive/);
    assert.equal(table.rows.length, 3);
});

test('a row refuses a value of the wrong type, out of range or too long, naming table and field', () => {
    const row = orders({ withRules: false }).rows[0];
    assert.throws(() => row.set('Quantity', 1.5), (error) => error.code === 'typeMismatch' && error.field === 'Quantity' && error.table === 'Orders');
    assert.throws(() => row.set('Quantity', 2 ** 31), (error) => error.code === 'valueOutOfRange');
    assert.throws(() => row.set('Status', 'much too long'), (error) => error.code === 'valueTooLong');
    assert.throws(() => row.set('Price', NaN), (error) => error.code === 'valueOutOfRange' && /NaN is not a number/.test(error.message));
    assert.throws(() => row.set('Nope', 1), (error) => error.code === 'unknownField');
    assert.equal(row.state, 'unchanged');
});

test('a decimal needs a power of ten the server\'s decimals have (10^-128 to 10^127 on its shortest digits)', () => {
    const row = orders({ withRules: false }).rows[0];
    for (const beyond of [1e128, 1e300, -1e140, 2.5e-128, 7e-130]) {
        assert.throws(() => row.set('Price', beyond), (error) => error.code === 'typeMismatch' && /is not a valid currency value/.test(error.message), String(beyond));
    }
    for (const within of [1e127, 1.5e128, 1e-127, 1.25e-126, 1e21, 650.12345, 0.1 + 0.2]) {
        row.set('Price', within);
        assert.equal(row.get('Price'), within);
    }
});

test('a rule reading a field the table lacks throws instead of seeing undefined', () => {
    const table = new DataTable('T', [{ name: 'Id', type: 'integer', primaryKey: true }, { name: 'constructor', type: 'string' }]);
    table.load([[1, 'x']]);
    const schema = { name: 'S', tables: [{ name: 'T', fields: table.fields, script: { name: 'T.js', source: 'function beforePost(row) { if (row.Statsu) fail("no"); }' } }] };
    table.rules = new RuleSet(schema);
    assert.throws(() => table.rows[0].set('constructor', 'y'), (error) => error.code === 'ruleError' && /no field 'Statsu'/.test(error.message));
});

test('setting a value back to the original makes the row unchanged again', () => {
    const row = orders({ withRules: false }).rows[0];
    row.set('Quantity', 9);
    assert.equal(row.state, 'modified');
    row.set('Quantity', 2);
    assert.equal(row.state, 'unchanged');
});

test('the delta carries every change with the user\'s edits, in change order; revert drops a change', () => {
    const table = orders();
    table.rows[0].set('Quantity', 4);
    const added = table.addRow({ Quantity: 2, Price: 19.99 });
    table.rows[1].revert();
    const delta = table.makeDelta();
    assert.equal(delta.tableName, 'Orders');
    assert.deepEqual(delta.keyFields, ['OrderId']);
    assert.deepEqual(delta.changes.map((change) => change.type), ['update', 'insert']);
    const [update, insert] = delta.changes;
    assert.deepEqual(update.oldValues.Quantity, { integer: 2 });
    assert.deepEqual(update.newValues.Quantity, { integer: 4 });
    assert.deepEqual(update.newValues.Touches, { integer: 1 });
    assert.deepEqual(insert.newValues.Price, { decimal: '19.99' });
    assert.deepEqual(insert.edits.map((edit) => edit.kind), ['insert']);
    assert.ok(update.edits[0].sequence < insert.edits[0].sequence, 'one sequence across the user\'s edits');
    added.revert();
    assert.equal(table.makeDelta().changes.length, 1);
});

test('a row added then removed still goes to the server, whose rules ran on it too', () => {
    const table = orders({ withRules: false });
    const row = table.addRow({ Status: 'held' });
    row.remove();
    assert.equal(table.rows.length, 2);
    const delta = table.makeDelta();
    assert.deepEqual(delta.changes.map((change) => change.edits.map((edit) => edit.kind)), [['insert', 'delete']]);
});

test('accept: resolved changes become originals with the server\'s values and real keys; failed ones keep the user\'s values', () => {
    const table = orders({ withRules: false });
    const details = new DataTable('Details', [{ name: 'DetailId', type: 'autoInc', primaryKey: true }, { name: 'OrderId', type: 'integer' }]);
    details.foreignKeys = [{ field: 'OrderId', references: 'Orders', referencedField: 'OrderId' }];
    const added = table.addRow({ Status: 'new' });
    const temporary = added.get('OrderId');
    const detail = details.addRow({ OrderId: temporary });
    table.rows[0].set('Quantity', 7);
    const delta = table.makeDelta();
    const update = delta.changes.find((change) => change.type === 'update');
    const insert = delta.changes.find((change) => change.type === 'insert');
    table.accept({ ...delta, changes: [
        { ...update, status: 'failed', message: 'too many', failure: { kind: 'refusal', message: 'too many', line: 3 } },
        { ...insert, status: 'resolved', refreshedValues: { OrderId: { integer: 41 }, Touches: { integer: 1 } } },
    ] }, [details]);
    assert.equal(added.state, 'unchanged');
    assert.equal(added.get('OrderId'), 41);
    assert.equal(added.get('Touches'), 1);
    assert.equal(detail.get('OrderId'), 41, 'the foreign key follows the new key');
    assert.equal(detail.edits[0].values.OrderId, 41, 'so does the edit the server replays');
    assert.equal(table.rows[0].state, 'modified');
    assert.equal(table.rows[0].get('Quantity'), 7);
    assert.equal(table.rows[0].failure.message, 'too many');
    assert.equal(table.rows[0].failure.line, 3);
});

test('rows whose change awaits its answer cannot change', () => {
    const row = orders({ withRules: false }).rows[0];
    row.locked = true;
    assert.throws(() => row.set('Quantity', 3), (error) => error.code === 'rowLocked');
    assert.throws(() => row.remove(), (error) => error.code === 'rowLocked');
});

test('session and schema globals; a handler returning a promise is a broken rule', () => {
    const table = new DataTable('T', [{ name: 'Id', type: 'integer', primaryKey: true }, { name: 'Who', type: 'string' }]);
    table.load([[1, null]]);
    const source = `function beforePost(row) { row.Who = session.User + ':' + session.hasRole('Sales') + ':' + schema.T.fields.length + ':' + isServer; }
                    async function beforeDelete(row) {}`;
    table.rules = new RuleSet({ name: 'S', tables: [{ name: 'T', fields: table.fields, script: { name: 'T.js', source } }] },
        { session: { values: { User: 'ann' }, roles: ['Sales'] } });
    table.rows[0].set('Id', 1);
    assert.equal(table.rows[0].get('Who'), null, 'writing the value a row has is no change: no rules run');
    table.rows[0].set('Id', 2);
    assert.equal(table.rows[0].get('Who'), 'ann:true:2:false');
    assert.throws(() => table.rows[0].remove(), (error) => error.code === 'ruleError' && /promise/.test(error.message));
});

/** Two tables whose rules read and write each other through lda. */
function shop() {
    const clientFields = [{ name: 'ClientId', type: 'integer', primaryKey: true }, { name: 'Name', type: 'string' }, { name: 'Orders', type: 'integer', defaultValue: 0 }];
    const orderFields = [{ name: 'OrderId', type: 'autoInc', primaryKey: true }, { name: 'ClientId', type: 'integer' }, { name: 'Status', type: 'string' }];
    const clients = new DataTable('Clients', clientFields);
    clients.load([[1, 'Acme', 1], [2, 'Globex', 0]]);
    const orders = new DataTable('Orders', orderFields);
    orders.load([[10, 1, 'open']]);
    const tables = new Map([['clients', clients], ['orders', orders]]);
    const schema = { name: 'Shop', tables: [
        { name: 'Clients', fields: clientFields, script: { fileName: 'Clients.js', source: `
            function beforeDelete(row) {
                const open = lda.selectWhere('Orders', "ClientId = :id AND Status = 'open'", { id: row.ClientId });
                if (open.length > 0) fail(row.Name + ' has ' + open.length + ' open orders');
            }` } },
        { name: 'Orders', fields: orderFields, script: { fileName: 'Orders.js', source: `
            function beforePost(row) {
                const client = lda.select('Clients', row.ClientId);
                if (client === null) fail('client ' + row.ClientId + ' does not exist');
                log('seen', lda.selectWhere('Orders', "Status = 'open'").map((order) => order.OrderId + ':' + order.Status).join());
            }
            function beforeInsert(row) {
                const client = lda.select('Clients', row.ClientId);
                lda.update('Clients', row.ClientId, { Orders: client.Orders + 1 });
            }
` } },
    ] };
    const logged = [];
    const rules = new RuleSet(schema, { tables: () => tables, log: (line) => logged.push(line) });
    clients.rules = rules;
    orders.rules = rules;
    return { clients, orders, rules, logged };
}

test('lda reads the table as a BEFORE trigger does: a row being inserted is not there, one being updated has its old values', () => {
    const { orders, logged } = shop();
    orders.rows[0].set('Status', 'held');
    const added = orders.addRow({ ClientId: 2, Status: 'open' });
    // The update finds order 10 by its status before the change, and reads it with its new one;
    // the insert finds neither order 10 (held now) nor itself.
    assert.deepEqual(logged, ['seen 10:held', 'seen ']);
    assert.equal(added.state, 'added');
    assert.throws(() => orders.addRow({ ClientId: 7 }), (error) => error.code === 'refused' && error.message === 'client 7 does not exist');
});

test('what rules write through lda runs the target\'s rules and is no edit of the user; a refusal through lda names its script', () => {
    const { clients, orders } = shop();
    orders.addRow({ ClientId: 2, Status: 'open' });
    const globex = clients.rows[1];
    assert.equal(globex.get('Orders'), 1, 'beforeInsert counted the order through lda.update');
    assert.equal(globex.state, 'modified');
    assert.deepEqual(globex.edits, [], 'the server\'s rules make this change themselves');
    assert.deepEqual(clients.makeDelta().changes[0].edits, []);
    assert.throws(() => clients.rows[0].remove(), (error) => error.code === 'refused' && error.message === 'Acme has 1 open orders' && error.file === 'Clients.js');
});

test('a validation runs the delta events and beforeCommit, and puts back what the rules changed through lda', async () => {
    const { validateDeltas } = await import('../validation.js');
    const clientFields = [{ name: 'ClientId', type: 'integer', primaryKey: true }, { name: 'Orders', type: 'integer' }];
    const orderFields = [{ name: 'OrderId', type: 'autoInc', primaryKey: true }, { name: 'ClientId', type: 'integer' }];
    const clients = new DataTable('Clients', clientFields);
    clients.load([[1, 0], [2, 0]]);
    clients.complete = true;
    const orders = new DataTable('Orders', orderFields);
    orders.foreignKeys = [{ field: 'ClientId', references: 'Clients', referencedField: 'ClientId' }];
    const tables = new Map([['clients', clients], ['orders', orders]]);
    const schema = { name: 'S', updateOrder: ['Orders'], tables: [
        { name: 'Clients', fields: clientFields },
        { name: 'Orders', fields: orderFields, script: { fileName: 'Orders.js', source: `
            function beforeProcessDeltaChange(delta, change) {
                if (change.ClientId === 2) fail('client 2 is on hold');
                const client = lda.select('Clients', change.ClientId);
                if (client) lda.update('Clients', client.ClientId, { Orders: client.Orders + 1 });
            }
            function afterProcessDelta(delta) { log(delta.name, delta.count, delta[0].status, delta[1].status, delta[1].failed); }` } },
    ] };
    const logged = [];
    const rules = new RuleSet(schema, { tables: () => tables, log: (line) => logged.push(line) });
    orders.rules = rules;
    orders.addRow({ ClientId: 1 });
    orders.addRow({ ClientId: 2 });
    orders.addRow({ ClientId: 7 });
    const verdicts = validateDeltas([orders.makeDelta()], { rules, tables, schema });
    const statuses = verdicts.map((delta) => [delta.tableName, delta.changes.map((change) => `${change.status}${change.message ? `: ${change.message}` : ''}`)]);
    assert.deepEqual(statuses, [
        ['Orders', ['resolved', 'failed: client 2 is on hold', 'failed: Orders.ClientId = 7 refers to no row of Clients (ClientId)']],
        ['Clients', ['resolved']],
    ], 'the change the rules made through lda joined the unit');
    assert.deepEqual(logged, ['Orders 3 resolved failed true']);
    assert.equal(verdicts[0].changes[1].failure.event, 'beforeProcessDeltaChange');
    assert.equal(verdicts[0].changes[1].failure.line, 3);
    assert.equal(clients.rows[0].get('Orders'), 0, 'what the rules wrote is put back');
    assert.equal(clients.rows[0].state, 'unchanged');
    assert.equal(orders.rows.length, 3);
    assert.deepEqual(orders.rows.map((row) => row.state), ['added', 'added', 'added']);
});

test('a new row posted explicitly needs its required fields; a key must be whole and free', () => {
    const table = orders({ withRules: false });
    const row = table.addRow({}, { inEditMode: true });
    assert.throws(() => row.post(), (error) => error.code === 'requiredValueMissing' && error.field === 'Status' && error.message === 'the field is required; set it before posting the new row');
    assert.equal(row.isEditing, true, 'the row waits, in edit mode');
    row.set('Status', 'open');
    row.post();
    const keyed = new DataTable('K', [{ name: 'Code', type: 'string', primaryKey: true }, { name: 'Name', type: 'string' }]);
    keyed.load([['A', 'first']]);
    assert.throws(() => keyed.addRow({ Code: 'A', Name: 'again' }), (error) => error.code === 'constraintViolation' && error.message === 'the primary key (Code=A) is already used by row (Code=A)');
    assert.equal(keyed.rows.length, 1);
    assert.throws(() => keyed.rows[0].set('Code', null), (error) => error.code === 'constraintViolation' && /part of the primary key/.test(error.message));
    assert.throws(() => table.rows[0].set('OrderId', 5), (error) => error.code === 'readOnlyField' && /auto-increment/.test(error.message));
    assert.throws(() => table.rows[0].set('Status', null), (error) => error.code === 'requiredValueMissing' && error.row === 'row (OrderId=1)'
        && error.message === 'the field is required and cannot be NULL');
});

// The same lines as ChangeEventRunTests.aChangeObjectHasTheShapeOfEverySite (Swift): one
// implementation of the change objects (rule-environment.js) on every site.
test('delta events get change objects of the shape every site gives them', async () => {
    const { validateDeltas } = await import('../validation.js');
    const lineFields = [{ name: 'Id', type: 'integer', primaryKey: true }, { name: 'Quantity', type: 'integer' }];
    const lines = new DataTable('Lines', lineFields);
    lines.load([[1, 5], [2, 6]]);
    const schema = { name: 'S', tables: [{ name: 'Lines', fields: lineFields, script: { fileName: 'Lines.js', source: `
        function beforeProcessDeltaChange(delta, change) {
            log([change.type, Object.keys(change).join(','), change.isInsert, change.isUpdate, change.isDelete,
                 change.changeID === change.changeId, change.Quantity, change.failed, change.error].join('|'));
        }
        function afterProcessDelta(delta) { log(delta.length + ' ' + Object.keys(delta).join(',') + ' ' + delta[0].status); }` } }] };
    const tables = new Map([['lines', lines]]);
    const logged = [];
    const rules = new RuleSet(schema, { tables: () => tables, log: (line) => logged.push(line) });
    lines.rules = rules;
    lines.rows[0].set('Quantity', 50);
    lines.rows[1].remove();
    lines.addRow({ Id: 3, Quantity: 7 });
    const verdicts = validateDeltas([lines.makeDelta()], { rules, tables, schema });
    assert.deepEqual(verdicts[0].changes.map((change) => change.status), ['resolved', 'resolved', 'resolved']);
    const own = 'type,changeId,changeID,oldValues,newValues,status,message';
    assert.deepEqual(logged, [
        `update|${own}|false|true|false|true|50|false|`,
        `delete|${own}|false|false|true|true|6|false|`,
        `insert|${own}|true|false|false|true|7|false|`,
        '3 0,1,2,name,count,length,changes resolved',
    ]);
});
