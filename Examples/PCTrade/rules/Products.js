// Rules of the Products table.

function beforePost(row) {
    if (!(row.UnitPrice > 0))
        fail('the price of ' + row.ProductName + ' must be above zero');
    if (row.UnitsInStock < 0)
        fail('the stock of ' + row.ProductName + ' cannot be negative');
    if (lda.select('Providers', row.ProviderId) === null)
        fail('provider ' + row.ProviderId + ' does not exist');
}

function beforeUpdate(row, old) {
    const change = Math.abs(row.UnitPrice - old.UnitPrice) / old.UnitPrice;
    if (change > 0.5)
        fail('the price of ' + row.ProductName + ' moved by ' + Math.round(change * 100) + '%; more than 50% needs a new product');
}

// A delta-level rule: it runs when changes are applied (on the server, or in a
// LocalDataAdapter's applyChanges), whoever made them.
function beforeProcessDeltaChange(delta, change) {
    if (change.type === 'delete')
        fail('products are never deleted; set Discontinued instead');
}
