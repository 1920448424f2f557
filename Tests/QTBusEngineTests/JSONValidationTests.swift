// SPDX-License-Identifier: MIT
import Testing
@testable import QTBusEngine

// Strings are enough for well-formed text; byte arrays are needed for anything
// a Swift String cannot hold (invalid UTF-8) or would be awkward to spell.
private func isValid(_ text: String) -> Bool {
    Array(text.utf8).withUnsafeBytes { _isValidJSON($0) }
}

private func isValid(_ bytes: [UInt8]) -> Bool {
    bytes.withUnsafeBytes { _isValidJSON($0) }
}

/// Wraps bytes in quotes so UTF-8 cases are tested inside a JSON string,
/// the only place non-ASCII bytes can legally appear.
private func quoted(_ bytes: [UInt8]) -> [UInt8] {
    [UInt8(ascii: "\"")] + bytes + [UInt8(ascii: "\"")]
}

private func nestedArrays(_ depth: Int) -> [UInt8] {
    [UInt8](repeating: UInt8(ascii: "["), count: depth)
        + [UInt8](repeating: UInt8(ascii: "]"), count: depth)
}

@Suite("JSON validation")
struct JSONValidationTests {

    // MARK: Top level

    @Test(
        "every value kind is accepted at top level",
        arguments: [
            "{}", "[]", #"{"a":1}"#, "[1,2,3]", #""text""#, #""""#,
            "0", "-1.5e3", "true", "false", "null",
            " \t\r\n null \t\r\n", #"{"a":[{"b":null},true,false,"x",-0.0]}"#,
            #"{ "k" : "v" , "k2" : [ ] }"#, "[[],{},[{}]]",
        ])
    func topLevelValues(_ text: String) {
        #expect(isValid(text))
    }

    @Test(
        "empty and whitespace-only input is rejected",
        arguments: [
            "", " ", "\t", "\r\n", "  \n\t  ",
        ])
    func emptyInput(_ text: String) {
        #expect(!isValid(text))
    }

    @Test("a zero-length buffer with no base address is rejected")
    func nilBuffer() {
        #expect(!_isValidJSON(UnsafeRawBufferPointer(start: nil, count: 0)))
    }

    @Test(
        "whitespace outside the four RFC characters is rejected",
        arguments: [
            "\u{0B}1", "1\u{0C}", "\u{A0}1", "\u{2028}[]", "[\u{00A0}]",
        ])
    func nonJSONWhitespace(_ text: String) {
        #expect(!isValid(text))
    }

    // MARK: Literals

    @Test(
        "malformed literals are rejected",
        arguments: [
            "tru", "True", "TRUE", "truex", "fals", "falsey", "nul", "nulll",
            "NULL", "t", "f", "n", "undefined", "[tru]", "[true false]",
        ])
    func badLiterals(_ text: String) {
        #expect(!isValid(text))
    }

    // MARK: Numbers

    @Test(
        "valid numbers",
        arguments: [
            "0", "-0", "1", "-1", "9", "10", "1234567890", "-1234567890",
            "0.0", "0.5", "-0.5", "3.14159", "1e5", "1E5", "1e+5", "1e-5",
            "1E+05", "0e0", "-0E-0", "1.5e10", "-2.25E-3",
            "123456789012345678901234567890", "1e999999", "[0,-0,1.0e1]",
        ])
    func validNumbers(_ text: String) {
        #expect(isValid(text))
    }

    @Test(
        "invalid numbers",
        arguments: [
            "+1", "01", "-01", "00", "1.", "-1.", ".5", "-.5", "1.e5", "1e",
            "1e+", "1E-", "-", "--1", "1.2.3", "1e5e5", "0x10", "0X1F", "NaN",
            "-NaN", "Infinity", "-Infinity", "1_000", "1,5", "1 2", "1e5.5",
            "0.", "[01]", "[1.]", "[-]", #"{"a":.5}"#, "١",
        ])
    func invalidNumbers(_ text: String) {
        #expect(!isValid(text))
    }

    // MARK: Strings

    @Test(
        "every escape is accepted",
        arguments: [
            #""\"""#, #""\\""#, #""\/""#, #""\b""#, #""\f""#, #""\n""#,
            #""\r""#, #""\t""#, #""\u0000""#, #""\u00e9""#, #""\u00E9""#,
            #""\uABCD""#, #""\uabcd""#, #""\uFfFf""#,
            #""a\"b\\c\/d\be\ff\ng\rh\ti\u0041j""#,
            #""\ud83d\ude00""#,  // surrogate pair
            #""\ud800""#, #""\udfff""#, #""\udc00\ud800""#,  // lone surrogates: grammar allows them
        ])
    func validEscapes(_ text: String) {
        #expect(isValid(text))
    }

    @Test(
        "invalid escapes are rejected",
        arguments: [
            #""\a""#, #""\x41""#, #""\'""#, #""\0""#, #""\U0041""#, #""\u""#,
            #""\u1""#, #""\u12""#, #""\u123""#, #""\u12G4""#, #""\uZZZZ""#,
            #""\u-123""#, #""\ ""#, #""\v""#, #""\""#, #""\"#, #""abc\"#,
            #""\u00"#, "\"\\\u{E9}\"",
        ])
    func invalidEscapes(_ text: String) {
        #expect(!isValid(text))
    }

    @Test("raw control characters inside strings are rejected", arguments: Array(UInt8(0x00)..<0x20))
    func controlCharacters(_ c: UInt8) {
        #expect(!isValid(quoted([UInt8(ascii: "a"), c, UInt8(ascii: "b")])))
    }

    @Test("DEL and other printable ASCII are fine in strings")
    func printableASCII() {
        #expect(isValid(quoted(Array(0x20...0x7F).filter { $0 != 0x22 && $0 != 0x5C })))
    }

    @Test(
        "unterminated strings are rejected",
        arguments: [
            #"""#, #""abc"#, #"["abc]"#, #"{"a:1}"#, #""abc\""#,
        ])
    func unterminatedStrings(_ text: String) {
        #expect(!isValid(text))
    }

    // MARK: UTF-8

    @Test(
        "valid 2-, 3- and 4-byte sequences",
        arguments: [
            [0xC2, 0x80],  // U+0080, smallest 2-byte
            [0xC3, 0xA9],  // é
            [0xDF, 0xBF],  // U+07FF, largest 2-byte
            [0xE0, 0xA0, 0x80],  // U+0800, smallest 3-byte
            [0xE2, 0x82, 0xAC],  // €
            [0xED, 0x9F, 0xBF],  // U+D7FF, just below surrogates
            [0xEE, 0x80, 0x80],  // U+E000, just above surrogates
            [0xEF, 0xBB, 0xBF],  // U+FEFF inside a string is just a character
            [0xEF, 0xBF, 0xBF],  // U+FFFF
            [0xF0, 0x90, 0x80, 0x80],  // U+10000, smallest 4-byte
            [0xF0, 0x9F, 0x98, 0x80],  // 😀
            [0xF3, 0xBF, 0xBF, 0xBF],  // U+FFFFF
            [0xF4, 0x8F, 0xBF, 0xBF],  // U+10FFFF, the last scalar
        ] as [[UInt8]])
    func validUTF8(_ seq: [UInt8]) {
        #expect(isValid(quoted(seq)))
        #expect(isValid(quoted([UInt8(ascii: "x")] + seq + seq + [UInt8(ascii: "y")])))
    }

    @Test(
        "valid non-ASCII text round-trips from Swift strings",
        arguments: [
            #""héllo wörld""#, #"{"ключ":"значение"}"#, #"["日本語","🎉🚀"]"#,
        ])
    func validUnicodeText(_ text: String) {
        #expect(isValid(text))
    }

    @Test(
        "overlong encodings are rejected",
        arguments: [
            [0xC0, 0x80],  // NUL, 2 bytes
            [0xC0, 0xAF],  // '/', 2 bytes
            [0xC1, 0xBF],  // U+007F, 2 bytes
            [0xE0, 0x80, 0x80],  // NUL, 3 bytes
            [0xE0, 0x9F, 0xBF],  // U+07FF, 3 bytes
            [0xF0, 0x80, 0x80, 0x80],  // NUL, 4 bytes
            [0xF0, 0x8F, 0xBF, 0xBF],  // U+FFFF, 4 bytes
        ] as [[UInt8]])
    func overlong(_ seq: [UInt8]) {
        #expect(!isValid(quoted(seq)))
    }

    @Test(
        "UTF-8-encoded surrogates are rejected",
        arguments: [
            [0xED, 0xA0, 0x80],  // U+D800
            [0xED, 0xAD, 0xBF],  // U+DB7F
            [0xED, 0xB0, 0x80],  // U+DC00
            [0xED, 0xBF, 0xBF],  // U+DFFF
            [0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x80],  // CESU-8 pair for U+1F600
        ] as [[UInt8]])
    func encodedSurrogates(_ seq: [UInt8]) {
        #expect(!isValid(quoted(seq)))
    }

    @Test(
        "code points past U+10FFFF are rejected",
        arguments: [
            [0xF4, 0x90, 0x80, 0x80],  // U+110000
            [0xF4, 0xBF, 0xBF, 0xBF],
            [0xF5, 0x80, 0x80, 0x80],
            [0xF7, 0xBF, 0xBF, 0xBF],  // U+1FFFFF
            [0xF8, 0x88, 0x80, 0x80, 0x80],  // old 5-byte form
            [0xFC, 0x84, 0x80, 0x80, 0x80, 0x80],  // old 6-byte form
        ] as [[UInt8]])
    func pastMaxScalar(_ seq: [UInt8]) {
        #expect(!isValid(quoted(seq)))
    }

    @Test(
        "truncated sequences are rejected",
        arguments: [
            [0xC3],
            [0xE2, 0x82],
            [0xE2],
            [0xF0, 0x9F, 0x98],
            [0xF0, 0x9F],
            [0xF0],
            [0xC3, 0x41],  // continuation replaced by ASCII
            [0xE2, 0x82, 0x41],
            [0xF0, 0x9F, 0x98, 0x41],
            [0xE2, 0xC3, 0xA9],  // new lead byte where a continuation belongs
        ] as [[UInt8]])
    func truncated(_ seq: [UInt8]) {
        #expect(!isValid(quoted(seq)))
    }

    @Test(
        "truncation at end of input is rejected",
        arguments: [
            [0x22, 0xC3],
            [0x22, 0xE2, 0x82],
            [0x22, 0xF0, 0x9F, 0x98],
        ] as [[UInt8]])
    func truncatedAtEnd(_ bytes: [UInt8]) {
        #expect(!isValid(bytes))
    }

    @Test(
        "stray continuation bytes are rejected",
        arguments: [
            [0x80], [0xBF], [0x41, 0x80], [0xC3, 0xA9, 0xA9], [0x80, 0x80],
            [0xE2, 0x82, 0xAC, 0x80],
        ] as [[UInt8]])
    func strayContinuation(_ seq: [UInt8]) {
        #expect(!isValid(quoted(seq)))
    }

    @Test(
        "bytes that never occur in UTF-8 are rejected", arguments: [0xC0, 0xC1] + Array(UInt8(0xF5)...0xFF) as [UInt8])
    func forbiddenBytes(_ b: UInt8) {
        #expect(!isValid(quoted([b])))
        #expect(!isValid(quoted([b, 0x80])))
        #expect(!isValid(quoted([b, 0x80, 0x80, 0x80])))
    }

    @Test(
        "non-ASCII bytes outside strings are rejected",
        arguments: [
            [0xC3, 0xA9], [0x5B, 0xC3, 0xA9, 0x5D], [0x31, 0xC3, 0xA9],
            [0x5B, 0x31, 0x5D, 0xE2, 0x82, 0xAC],
        ] as [[UInt8]])
    func nonASCIIOutsideStrings(_ bytes: [UInt8]) {
        #expect(!isValid(bytes))
    }

    // MARK: NUL and BOM

    @Test(
        "an embedded NUL is rejected wherever it appears",
        arguments: [
            [0x00],
            [0x00, 0x31],
            [0x31, 0x00],
            [0x5B, 0x31, 0x00, 0x5D],
            [0x22, 0x61, 0x00, 0x62, 0x22],
            [0x7B, 0x7D, 0x00],
            [0x6E, 0x75, 0x6C, 0x6C, 0x00],
            [0x20, 0x00, 0x20, 0x31],
        ] as [[UInt8]])
    func embeddedNUL(_ bytes: [UInt8]) {
        #expect(!isValid(bytes))
    }

    @Test(
        "a byte order mark is rejected",
        arguments: [
            [0xEF, 0xBB, 0xBF, 0x7B, 0x7D],  // before an object
            [0xEF, 0xBB, 0xBF, 0x31],  // before a number
            [0xEF, 0xBB, 0xBF],  // alone
            [0x20, 0xEF, 0xBB, 0xBF, 0x31],  // after whitespace
            [0x31, 0xEF, 0xBB, 0xBF],  // trailing
            [0xFE, 0xFF, 0x00, 0x31],  // UTF-16 BE BOM
            [0xFF, 0xFE, 0x31, 0x00],  // UTF-16 LE BOM
        ] as [[UInt8]])
    func byteOrderMark(_ bytes: [UInt8]) {
        #expect(!isValid(bytes))
    }

    // MARK: Structure

    @Test(
        "trailing garbage is rejected",
        arguments: [
            "{}x", "[]]", "{}}", "1 2", "true false", #""a" "b""#, "null,",
            "[1] [2]", "{} {}", "1 x", #""a"b"#, "[]\u{0B}", "0 //comment",
            "/* c */ 1", "1;",
        ])
    func trailingGarbage(_ text: String) {
        #expect(!isValid(text))
    }

    @Test(
        "trailing commas are rejected",
        arguments: [
            "[1,]", "[1, ]", #"{"a":1,}"#, #"{"a":1 , }"#, "[,]", "[,1]",
            "{,}", "[1,,2]", #"{"a":1,,"b":2}"#, "[[],]", "1,",
        ])
    func trailingCommas(_ text: String) {
        #expect(!isValid(text))
    }

    @Test(
        "object syntax errors are rejected",
        arguments: [
            #"{"a" 1}"#, #"{"a"}"#, #"{"a":}"#, #"{"a"::1}"#, #"{"a"=1}"#,
            #"{a:1}"#, #"{1:1}"#, #"{'a':1}"#, #"{"a":1 "b":2}"#, #"{:1}"#,
            #"{null:1}"#, #"{"a":1:2}"#, #"{"a",1}"#, "{[]:1}",
        ])
    func objectSyntax(_ text: String) {
        #expect(!isValid(text))
    }

    @Test(
        "unclosed or mismatched containers are rejected",
        arguments: [
            "[", "{", "[1", "[1,", #"{"a""#, #"{"a":"#, #"{"a":1"#, #"{"a":1,"#,
            "[[]", "[{}", "{\"a\":[}", "[}", "{]", "[1}", #"{"a":1]"#, "]", "}",
            "[[[[]]]", "[{\"a\":[1,{\"b\":2}]}",
        ])
    func unclosedContainers(_ text: String) {
        #expect(!isValid(text))
    }

    @Test("mixed nesting past the inline 64 levels keeps track of container kinds")
    func mixedDeepNesting() {
        // Alternating object/array so a wrong bit anywhere in the stack
        // would close with the wrong bracket.
        var open = ""
        var close = ""
        for level in 0..<300 {
            if level % 3 == 0 {
                open += #"{"k":"#
                close = "}" + close
            } else {
                open += "["
                close = "]" + close
            }
        }
        #expect(isValid(open + "1" + close))
        #expect(isValid(open + "{}" + close))
        // Swap the kind of a closer deep inside the spilled region.
        var wrong = Array(close)
        let idx = 20
        wrong[idx] = wrong[idx] == "}" ? "]" : "}"
        #expect(!isValid(open + "1" + String(wrong)))
        // Siblings after returning from depth: members after a nested value.
        #expect(isValid(open + #"[[1],{"x":[2]},3]"# + close))
    }

    // MARK: Depth

    @Test("nesting of exactly 10,000 levels is accepted")
    func depthAtCap() {
        #expect(isValid(nestedArrays(10_000)))
        let objects =
            String(repeating: #"{"a":"#, count: 9_999) + "{}"
            + String(repeating: "}", count: 9_999)
        #expect(isValid(objects))
    }

    @Test("nesting of 10,001 levels is rejected")
    func depthPastCap() {
        #expect(!isValid(nestedArrays(10_001)))
        let objects =
            String(repeating: #"{"a":"#, count: 10_000) + "{}"
            + String(repeating: "}", count: 10_000)
        #expect(!isValid(objects))
        #expect(!isValid(String(repeating: "[", count: 10_000) + "[1]" + String(repeating: "]", count: 10_000)))
    }

    @Test("a million unclosed brackets is rejected without crashing")
    func millionDeep() {
        #expect(!isValid([UInt8](repeating: UInt8(ascii: "["), count: 1_000_000)))
        #expect(!isValid(String(repeating: #"{"a":"#, count: 1_000_000)))
    }
}
