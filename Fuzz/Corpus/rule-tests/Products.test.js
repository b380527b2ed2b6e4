// Rule tests of Products.js, including its delta-level rule, which runs at apply().

fixture('Providers', [{ ProviderId: 930, ProviderName: 'Fixture Supply' }]);
fixture('Products', [
    { ProductId: 9300, ProductName: 'Test Monitor', ProviderId: 930, UnitPrice: 200, UnitsInStock: 5, Discontinued: false },
]);

test('a price must be above zero', () => {
    expectFail(() => insert('Products', { ProductName: 'Freebie', ProviderId: 930, UnitPrice: 0 }), 'must be above zero');
});

test('a product needs an existing provider', () => {
    expectFail(() => insert('Products', { ProductName: 'Orphan', ProviderId: 999999, UnitPrice: 10 }), 'provider 999999 does not exist');
});

test('a price moves by at most half', () => {
    expectFail(() => update('Products', 9300, { UnitPrice: 350 }), /moved by 75%/);
    expectPass(() => update('Products', 9300, { UnitPrice: 250 }));
});

test('products are never deleted, and the apply says so', () => {
    update('Products', 9300, { UnitsInStock: 7 });
    remove('Products', 9300);
    expectFail(() => apply(), 'never deleted; set Discontinued instead');
});

test('valid changes apply', () => {
    const product = insert('Products', { ProductName: 'New Webcam', ProviderId: 930, UnitPrice: 59.9 });
    expect(apply()).toBe(1);
    expect(product.ProductId).toBeGreaterThan(0);
    expect(select('Products', product.ProductId).ProductName).toBe('New Webcam');
});

test('stock cannot be negative', () => {
    expectFail(() => update('Products', 9300, { UnitsInStock: -2 }), 'the stock of Test Monitor cannot be negative');
});
