// Business rules of the example Clients table. Handlers are top-level
// functions named after the events; see Documentation/Rules.md.

function onNewRow(row) {
    row.ClientDiscount = 0.05;                    // every new client starts at 5%
}

function beforePost(row) {
    if (row.ClientName.trim() === '')
        fail('a client needs a name');
    if (row.ClientDiscount < 0 || row.ClientDiscount > 0.25)
        fail('ClientDiscount must be between 0 and 25%, got ' + Math.round(row.ClientDiscount * 100) + '%');
}

function beforeUpdate(row, old) {
    if (old.ContactPhone !== null && row.ContactPhone === null)
        fail('keep a phone number for ' + row.ClientName + ' (it was ' + old.ContactPhone + ')');
}

function beforeDelete(row) {
    if (row.AdditionalInfo === 'Key account')
        fail(row.ClientName + ' is a key account and cannot be deleted');
}

function beforeProcessDeltaChange(delta, change) {
    if (!change.isDelete && change.newValues.ClientDiscount > 0.15 && !session.hasRole('Manager'))
        fail('discounts above 15% need a manager (' + change.newValues.ClientName + ')');
}

function afterProcessDelta(delta) {
    const applied = delta.changes.filter(change => !change.failed).length;
    log(delta.name + ':', applied, 'of', delta.count, 'change(s) pass the delta rules');
}
