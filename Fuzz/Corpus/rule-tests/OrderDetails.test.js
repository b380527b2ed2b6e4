// Rule tests of OrderDetails.js: defaults, the calculated line total, the
// product lookup, and the cross-table credit check through lda.

fixture('Clients', [
    { ClientId: 920, ClientName: 'Careful Buyer', CreditLimit: 500, ClientDiscount: 0, Active: true },
]);
fixture('Providers', [{ ProviderId: 920, ProviderName: 'Fixture Parts' }]);
fixture('Products', [
    { ProductId: 9200, ProductName: 'Test Keyboard', ProviderId: 920, UnitPrice: 40, UnitsInStock: 10, Discontinued: false },
    { ProductId: 9201, ProductName: 'Old Mouse', ProviderId: 920, UnitPrice: 15, UnitsInStock: 0, Discontinued: true },
]);
fixture('Orders', [
    { OrderId: 9200, ClientId: 920, OrderDate: new Date('2026-04-01T09:00:00Z'), Status: 'open' },
    { OrderId: 9201, ClientId: 920, OrderDate: new Date('2026-01-01T09:00:00Z'), Status: 'shipped' },
    { OrderId: 9202, ClientId: 920, OrderDate: new Date('2026-04-02T09:00:00Z'), Status: 'open' },
]);
fixture('OrderDetails', [
    { DetailId: 9200, OrderId: 9201, ProductId: 9200, Quantity: 1, UnitPrice: 40, Discount: 0 },
]);

test('a new line takes the catalogue price and computes its total', () => {
    const line = insert('OrderDetails', { OrderId: 9200, ProductId: 9200, Quantity: 3, Discount: 0.1 });
    expect(line.UnitPrice).toBe(40);
    expect(line.LineTotal).toBeCloseTo(108);
    expect(line.ProductName).toBe('Test Keyboard');
});

test('a line starts with one item', () => {
    expect(insert('OrderDetails', { OrderId: 9200, ProductId: 9200 }).Quantity).toBe(1);
});

test('the quantity must be positive', () => {
    expectFail(() => insert('OrderDetails', { OrderId: 9200, ProductId: 9200, Quantity: 0 }), 'at least 1');
});

test('a discontinued product cannot be ordered', () => {
    expectFail(() => insert('OrderDetails', { OrderId: 9200, ProductId: 9201 }), 'Old Mouse is discontinued');
});

test('open orders stay within the client credit limit', () => {
    expectPass(() => insert('OrderDetails', { OrderId: 9200, ProductId: 9200, Quantity: 10 }));
    expectFail(() => insert('OrderDetails', { OrderId: 9200, ProductId: 9200, Quantity: 3 }),
               /would total 520\.00, above the credit limit of 500\.00/);
});

test('lines of shipped orders stay', () => {
    expectFail(() => remove('OrderDetails', 9200), 'order 9201 has shipped');
    expectFail(() => insert('OrderDetails', { OrderId: 9201, ProductId: 9200 }), 'no lines can be added');
});

test('line discounts stay within 25%', () => {
    expectFail(() => insert('OrderDetails', { OrderId: 9200, ProductId: 9200, Discount: 0.3 }), 'between 0 and 25%');
});

test('a line needs an existing product and order', () => {
    expectFail(() => insert('OrderDetails', { OrderId: 9200, ProductId: 123456 }), 'product 123456 does not exist');
    expectFail(() => insert('OrderDetails', { OrderId: 123456, ProductId: 9200 }), 'order 123456 does not exist');
});

test('a line stays in its order', () => {
    const line = insert('OrderDetails', { OrderId: 9200, ProductId: 9200 });
    apply();
    expectFail(() => update('OrderDetails', line, { OrderId: 9202 }), 'cannot move to another order');
});
