//! Strings escaped as the Java driver's JsonWriter escapes them (see ``extjson.java_string``).

use crate::escape_table::ESCAPED_BMP;

const HEX: &[u8; 16] = b"0123456789abcdef";

/// 0: written as is; 1: short escape; 2: ``\uXXXX``.
static ASCII_CLASS: [u8; 128] = {
    let mut table = [0u8; 128];
    let mut i = 0;
    while i < 0x20 {
        table[i] = 2;
        i += 1;
    }
    table[0x7F] = 2;
    table[b'"' as usize] = 1;
    table[b'\\' as usize] = 1;
    table[0x08] = 1;
    table[0x0C] = 1;
    table[b'\n' as usize] = 1;
    table[b'\r' as usize] = 1;
    table[b'\t' as usize] = 1;
    table
};

fn push_unicode_escape(out: &mut String, unit: u32) {
    let bytes = [
        b'\\',
        b'u',
        HEX[((unit >> 12) & 0xF) as usize],
        HEX[((unit >> 8) & 0xF) as usize],
        HEX[((unit >> 4) & 0xF) as usize],
        HEX[(unit & 0xF) as usize],
    ];
    for b in bytes {
        out.push(b as char);
    }
}

fn bmp_escaped(cp: u32) -> bool {
    let cp = cp as u16;
    ESCAPED_BMP
        .binary_search_by(|&(lo, hi)| {
            if hi < cp {
                std::cmp::Ordering::Less
            } else if lo > cp {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

/// Appends ``text`` quoted and escaped.
pub fn push_java_string(out: &mut String, text: &str) {
    out.push('"');
    let bytes = text.as_bytes();
    let mut clean_from = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b < 0x80 {
            let class = ASCII_CLASS[b as usize];
            if class != 0 {
                out.push_str(&text[clean_from..i]);
                match b {
                    b'"' => out.push_str("\\\""),
                    b'\\' => out.push_str("\\\\"),
                    0x08 => out.push_str("\\b"),
                    0x0C => out.push_str("\\f"),
                    b'\n' => out.push_str("\\n"),
                    b'\r' => out.push_str("\\r"),
                    b'\t' => out.push_str("\\t"),
                    _ => push_unicode_escape(out, b as u32),
                }
                clean_from = i + 1;
            }
            i += 1;
            continue;
        }
        // a multi-byte character: decode it (text is valid UTF-8)
        let ch = text[i..].chars().next().unwrap_or('\u{FFFD}');
        let len = ch.len_utf8();
        let cp = ch as u32;
        let escape = cp >= 0x10000 || bmp_escaped(cp);
        if escape {
            out.push_str(&text[clean_from..i]);
            if cp >= 0x10000 {
                let v = cp - 0x10000;
                push_unicode_escape(out, 0xD800 | (v >> 10));
                push_unicode_escape(out, 0xDC00 | (v & 0x3FF));
            } else {
                push_unicode_escape(out, cp);
            }
            clean_from = i + len;
        }
        i += len;
    }
    out.push_str(&text[clean_from..]);
    out.push('"');
}
