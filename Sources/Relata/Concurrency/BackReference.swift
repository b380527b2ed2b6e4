/// A way back to an object that neither keeps it alive nor outlives it unnoticed: ``object``
/// is the object while it lives and nil once it has gone — what a weak reference gives,
/// without one.
///
/// A weak reference gives the object it points to a side table, and from then on every retain
/// and release of that object, anywhere, takes the runtime's slow path. A script context and a
/// rule runtime are retained and released several times per rule call, a ``DataTable`` several
/// times per edit, while the objects that point back to them (a row's JavaScript object, a
/// table's rule hook, an observation, a lookup's link) are made per call or live as long as the
/// table: with weak references, that slow path was a twentieth of an edit with rules, and a
/// tenth of an edit of a table that had once been observed.
///
/// The object makes its back reference once and ends it when it goes:
///
/// ```swift
/// final class Owner {
///     private var madeBack: BackReference<Owner>?
///     var back: BackReference<Owner> { BackReference.kept(in: &madeBack, to: self) }
///     deinit { madeBack?.end() }
/// }
/// ```
///
/// The object and whatever holds its back reference are used from one place at a time (none of
/// them is `Sendable`), so the reference is never read while the object is going.
package final class BackReference<Object: AnyObject> {
    /// Unowned, not weak: it keeps no side table. Read only before ``end()``, which the
    /// object's `deinit` calls, so never once the object has gone.
    private unowned let target: Object
    private var ended = false

    package init(_ object: Object) {
        target = object
    }

    /// The object, or nil once it has gone.
    package var object: Object? { ended ? nil : target }

    /// The object is going: from now on ``object`` is nil.
    package func end() {
        ended = true
    }

    /// The back reference to `object` that `kept` holds, made and kept there on first use.
    package static func kept(in kept: inout BackReference?, to object: Object) -> BackReference {
        if let kept { return kept }
        let made = BackReference(object)
        kept = made
        return made
    }
}
