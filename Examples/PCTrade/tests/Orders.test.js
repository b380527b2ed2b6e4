// Rule tests of Orders.js and Orders.server.js (server-only: a rule test keeps the data, so it runs it).

fixture('Clients', [
    { ClientId: 910, ClientName: 'Active Buyer', CreditLimit: 5000, ClientDiscount: 0, Active: true },
    { ClientId: 911, ClientName: 'Dormant Buyer', CreditLimit: 5000, ClientDiscount: 0, Active: false },
]);
fixture('Orders', [
    { OrderId: 9100, ClientId: 910, OrderDate: new Date('2026-02-01T09:00:00Z'), Status: 'shipped' },
    { OrderId: 9101, ClientId: 910, OrderDate: new Date('2026-02-02T09:00:00Z'), Status: 'confirmed' },
]);

test('a new order is dated today and open', () => {
    const order = insert('Orders', { ClientId: 910 });
    expect(order.Status).toBe('open');
    expect(new Date().getTime() - order.OrderDate.getTime()).toBeLessThan(60000);
    expect(order.ClientName).toBe('Active Buyer');   // a lookup field
});

test('the status is one of the known ones', () => {
    expectFail(() => insert('Orders', { ClientId: 910, Status: 'lost' }), "'lost' is not an order status");
});

test('an inactive client cannot order', () => {
    expectFail(() => insert('Orders', { ClientId: 911 }), 'Dormant Buyer is inactive');
});

test('an order needs an existing client', () => {
    expectFail(() => insert('Orders', { ClientId: 123456 }), 'client 123456 does not exist');
});

test('a shipped order cannot be reopened', () => {
    expectFail(() => update('Orders', 9100, { Status: 'open' }), 'has shipped; it cannot become open');
    expectPass(() => update('Orders', 9101, { Status: 'shipped' }));
});

test('only open orders are deleted', () => {
    expectFail(() => remove('Orders', 9101), 'order 9101 is confirmed');
    const order = insert('Orders', { ClientId: 910 });
    expectPass(() => remove('Orders', order));
});

test('an order is applied with its lines, or nothing is applied', () => {
    update('Clients', 910, { ClientDiscount: 0.1 });
    insert('Orders', { ClientId: 910 });
    expectFail(() => apply(), /has no lines; add at least one/);
    // Orders' update rule is rollbackAll: the client change was not committed either.
    expectFail(() => apply(), /has no lines/);
});

test('ship addresses are stored in the warehouse format', () => {
    const order = insert('Orders', { ClientId: 910, ShipAddress: '  12   Dock\tSt ' });
    expect(order.ShipAddress).toBe('12 Dock St');
    expect(update('Orders', 9101, { ShipAddress: null }).ShipAddress).toBe(null);
});
