// SPDX-License-Identifier: MIT
// freeWith(object) without associated objects.
//
// On iOS, QTEventBus hangs a dispose bag on the object, so the object's dealloc disposes
// the subscription at once.  Linux has no associated objects and Swift offers no hook
// into another object's deinit, so a freeWith subscription holds its object weakly and
// the engine asks about it (QTBusEngine's Owners.swift): before each delivery, at every
// dispatch of the type from C or Swift (whatever the subtypes), and when the type's
// subscribers are counted.  Once the object is gone, the subscription is disposed by
// whichever asks first: it is not counted, no dispatch reports it as reached, and its
// closure is released no later than the end of the next dispatch of the type.  An
// `atQueue` hop checks the object again when it runs.
//
// The engine asks through these functions.  `alive` is its question outside its lock.
// `pin` is the question under the lock, so it must run no user code: it returns the
// object retained, and the engine drops it with `unpin` after the unlock, where the
// owner's deinit may run (the object's last other reference can go while it is pinned).
import QTBusEngine

/// Whether the owner of the subscription whose box is `userdata` is still there.
let _qtOwnerAlive: @convention(c) (UnsafeMutableRawPointer?) -> Bool = { userdata in
    Unmanaged<_QTSubscription>.fromOpaque(userdata.unsafelyUnwrapped)._withUnsafeGuaranteedRef { $0.owner != nil }
}

/// The owner of the subscription whose box is `userdata`, retained; nil once it is gone.
let _qtOwnerPin: @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? = { userdata in
    let box = Unmanaged<_QTSubscription>.fromOpaque(userdata.unsafelyUnwrapped).takeUnretainedValue()
    guard let owner = box.owner else { return nil }
    return Unmanaged.passRetained(owner).toOpaque()
}

/// Drops what `_qtOwnerPin` returned (may run the owner's deinit).
let _qtOwnerUnpin: @convention(c) (UnsafeMutableRawPointer?) -> Void = { pin in
    Unmanaged<AnyObject>.fromOpaque(pin.unsafelyUnwrapped).release()
}
