// Rules of the Clients table.

function onNewRow(row) {
    // A new client starts without a discount and with the standard credit limit.
    row.ClientDiscount = 0;
    row.CreditLimit = 1000;
}

function beforePost(row) {
    if (row.ClientName === null || row.ClientName.trim() === '')
        fail('a client needs a name');
    if (row.ClientDiscount < 0 || row.ClientDiscount > 0.3)
        fail('a discount of ' + Math.round(row.ClientDiscount * 100) + '% is outside 0–30%');
    if (row.CreditLimit < 0)
        fail('the credit limit cannot be negative');
}

function beforeDelete(row) {
    const orders = lda.selectWhere('Orders', 'ClientId = :id', { id: row.ClientId });
    if (orders.length > 0)
        fail(row.ClientName + ' has ' + orders.length + ' orders; mark the client inactive instead');
}

// Only a manager raises a credit limit. `session` is the logged-in user's on a server, and
// offline the schema file's (or `relata run --user … --role …`).
function beforeUpdate(row, old) {
    if (row.CreditLimit > old.CreditLimit && !session.hasRole('Manager'))
        fail('only a manager raises a credit limit; ' + session.User + ' may not');
}
