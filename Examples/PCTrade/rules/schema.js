// Schema-wide rules: they see every table's events after the table's own script.

function beforeCommit() {
    log('committing changes');
}

function afterRollback() {
    log('an apply was rolled back');
}
