// Server-only rules of Orders: they run where the data is kept — `relata serve`, or an
// adapter made from this schema file — after Orders.js, and are never sent to clients.

// Ship addresses are stored in the warehouse's format: single spaces, none at either end.
// A client sees the stored address when its apply is answered.
function beforePost(row) {
    if (row.ShipAddress !== null)
        row.ShipAddress = row.ShipAddress.replace(/\s+/g, ' ').trim();
}
