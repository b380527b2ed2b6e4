// Rules of the Orders table.

function onNewRow(row) {
    row.OrderDate = new Date();
    row.Status = 'open';
}

const statuses = ['open', 'confirmed', 'shipped', 'cancelled'];

function beforePost(row) {
    if (!statuses.includes(row.Status))
        fail("'" + row.Status + "' is not an order status (" + statuses.join(', ') + ')');
    const client = lda.select('Clients', row.ClientId);
    if (client === null)
        fail('client ' + row.ClientId + ' does not exist');
    if (!client.Active)
        fail(client.ClientName + ' is inactive and cannot order');
}

function beforeUpdate(row, old) {
    if (old.Status === 'shipped' && row.Status !== 'shipped')
        fail('order ' + row.OrderId + ' has shipped; it cannot become ' + row.Status);
}

function beforeDelete(row) {
    if (row.Status !== 'open')
        fail('only open orders can be deleted; order ' + row.OrderId + ' is ' + row.Status);
}

// A delta-level rule: an order is applied together with its lines. Orders has
// the update rule rollbackAll, so this failure rolls back the whole apply.
function beforeProcessDeltaChange(delta, change) {
    if (change.isInsert && lda.selectWhere('OrderDetails', 'OrderId = :id', { id: change.OrderId }).length === 0)
        fail('order ' + change.OrderId + ' has no lines; add at least one before applying');
}
