// SPDX-License-Identifier: MIT
// The C boundary of qtbus.h's "Dispose bags" section: one @_cdecl function per
// declaration, each in the shape CEntry.swift describes.
import CQtbusShims
import CQtbusLibc

@_cdecl("qtbus_bag_create")
@usableFromInline package func _qtbus_bag_create(_ out: UnsafeMutablePointer<qtbus_bag>?) -> Int32 {
    entryPoint("qtbus_bag_create", checks: try required(out, "bag_out is NULL")) { out in
        let id = makeBag()
        if id == 0 { return QTBUS_ENOMEM.rawValue }
        out.pointee = qtbus_bag(id: id)
        return QTBUS_OK.rawValue
    }
}

@_cdecl("qtbus_bag_add")
@usableFromInline package func _qtbus_bag_add(_ bag: qtbus_bag, _ token: qtbus_token) -> Int32 {
    entryPoint("qtbus_bag_add") { addToBag(bag.id, token.id) }
}

@_cdecl("qtbus_bag_dispose")
@usableFromInline package func _qtbus_bag_dispose(_ bag: qtbus_bag) -> Int32 {
    entryPoint("qtbus_bag_dispose") { disposeBag(bag.id) }
}
