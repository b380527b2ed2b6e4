// Rules of the OrderDetails table: order lines.

function onNewRow(row) {
    row.Quantity = 1;
    row.Discount = 0;
}

// A calculated field (LineTotal in the schema).
function lineTotal(row) {
    return Math.round(row.Quantity * row.UnitPrice * (1 - row.Discount) * 100) / 100;
}

function beforePost(row) {
    if (row.Quantity <= 0)
        fail('the quantity must be at least 1');
    if (row.Discount < 0 || row.Discount > 0.25)
        fail('a line discount must be between 0 and 25%');
    const product = lda.select('Products', row.ProductId);
    if (product === null)
        fail('product ' + row.ProductId + ' does not exist');
    if (product.Discontinued)
        fail(product.ProductName + ' is discontinued');
    if (row.UnitPrice === null)
        row.UnitPrice = product.UnitPrice;   // the catalogue price unless one was given
    checkCredit(row);
}

function beforeUpdate(row, old) {
    if (row.OrderId !== old.OrderId)
        fail('a line cannot move to another order');
}

function beforeDelete(row) {
    const order = lda.select('Orders', row.OrderId);
    if (order !== null && order.Status === 'shipped')
        fail('order ' + row.OrderId + ' has shipped; its lines cannot be removed');
}

// The client's open orders, this line included, must stay within the credit limit.
function checkCredit(row) {
    const order = lda.select('Orders', row.OrderId);
    if (order === null)
        fail('order ' + row.OrderId + ' does not exist');
    if (order.Status === 'shipped')
        fail('order ' + row.OrderId + ' has shipped; no lines can be added or changed');
    const client = lda.select('Clients', order.ClientId);
    let total = lineTotal(row);
    for (const other of lda.selectWhere('Orders', "ClientId = :client AND Status <> 'shipped' AND Status <> 'cancelled'", { client: order.ClientId })) {
        for (const line of lda.selectWhere('OrderDetails', 'OrderId = :order', { order: other.OrderId })) {
            if (line.DetailId !== row.DetailId) total += line.LineTotal;
        }
    }
    if (total > client.CreditLimit)
        fail('open orders of ' + client.ClientName + ' would total ' + total.toFixed(2) +
             ', above the credit limit of ' + client.CreditLimit.toFixed(2));
}
