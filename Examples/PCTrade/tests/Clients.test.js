// Rule tests of Clients.js. Each test starts from the schema's data plus these fixtures.

fixture('Clients', [
    { ClientId: 900, ClientName: 'Fixture Trading', CreditLimit: 5000, ClientDiscount: 0, Active: true },
    { ClientId: 901, ClientName: 'Idle Client', CreditLimit: 1000, ClientDiscount: 0, Active: true },
]);
fixture('Orders', [
    { OrderId: 9000, ClientId: 900, OrderDate: new Date('2026-03-01T09:00:00Z'), Status: 'open' },
]);

test('a new client starts without a discount and with the standard credit limit', () => {
    const client = insert('Clients', { ClientName: 'Newcomer Ltd' });
    expect(client.ClientDiscount).toBe(0);
    expect(client.CreditLimit).toBe(1000);
    expect(client.ClientId).toBeLessThan(0);   // a temporary key until the apply
});

test('a client needs a name', () => {
    expectFail(() => insert('Clients', { ClientName: '   ' }), 'a client needs a name');
});

test('discounts stay within 0-30%', () => {
    expectFail(() => update('Clients', 900, { ClientDiscount: 0.35 }), /35% is outside/);
    expectPass(() => update('Clients', 900, { ClientDiscount: 0.3 }));
    expect(select('Clients', 900).ClientDiscount).toBe(0.3);
});

test('a client with orders is not deleted', () => {
    expectFail(() => remove('Clients', 900), /has 1 orders; mark the client inactive/);
    expect(select('Clients', 900)).toEqual(select('Clients', 900));
});

test('a client without orders can be deleted', () => {
    expectPass(() => remove('Clients', 901));
    expect(select('Clients', 901)).toBeNull();
});

test('the credit limit cannot be negative', () => {
    expectFail(() => update('Clients', 900, { CreditLimit: -1 }), 'cannot be negative');
});

test('only a manager raises a credit limit', () => {
    expectPass(() => update('Clients', 901, { CreditLimit: 2000 }));   // the schema's session: demo, a manager
    setSession({ user: 'clerk', roles: ['Clerk'], values: { UserId: 2 } });
    expectFail(() => update('Clients', 900, { CreditLimit: 6000 }), 'only a manager raises a credit limit; clerk may not');
    expectPass(() => update('Clients', 900, { CreditLimit: 4000 }));
});
