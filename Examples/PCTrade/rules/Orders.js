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
