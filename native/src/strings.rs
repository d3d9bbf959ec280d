//! Strings escaped as the Java driver's JsonWriter escapes them (see ``extjson.java_string``), and the same text
//! already quoted once more as a JSON string (``quoted``: what Jackson makes of it, for JsonConverter's bytes).

use crate::escape_table::ESCAPED_BMP;
use crate::jackson_text::skip_clean_words;

const HEX: &[u8; 16] = b"0123456789abcdef";
const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

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

/// Non-zero when one of the 8 bytes of ``word`` may need an escape: a control character, ``"``, ``\\``, DEL or
/// a byte of a multi-byte character (which one is then found byte by byte).
#[inline]
fn special(word: u64) -> u64 {
    let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let control = word.wrapping_sub(ONES * 0x20) & !word & HIGH;
    control | (word & HIGH) | zero(word ^ (ONES * 0x22)) | zero(word ^ (ONES * 0x5C)) | zero(word ^ (ONES * 0x7F))
}

/// Appends an escape sequence of the Java writer (``\n``, ``\"``, ``\u00e9``, ...): as is, or ``quoted`` with its
/// backslashes and quotes escaped again.
#[inline]
fn push_escape(out: &mut String, quoted: bool, escape: &[u8]) {
    for &b in escape {
        if quoted && (b == b'\\' || b == b'"') {
            out.push('\\');
        }
        out.push(b as char);
    }
}

fn push_unicode_escape(out: &mut String, quoted: bool, unit: u32) {
    let bytes = [
        b'\\',
        b'u',
        HEX[((unit >> 12) & 0xF) as usize],
        HEX[((unit >> 8) & 0xF) as usize],
        HEX[((unit >> 4) & 0xF) as usize],
        HEX[(unit & 0xF) as usize],
    ];
    push_escape(out, quoted, &bytes);
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
    push_string(out, text, false);
}

/// Appends ``text`` quoted and escaped as the Java writer does, or (``quoted``) that JSON string as the content of
/// another JSON string, as Jackson writes it: every character the Java writer leaves as is is one Jackson leaves
/// too (it escapes controls, quotes, backslashes and characters outside the BMP, all escaped here already), so
/// only the escapes' backslashes and the quotes are escaped again.
pub fn push_string(out: &mut String, text: &str, quoted: bool) {
    out.push_str(if quoted { "\\\"" } else { "\"" });
    let bytes = text.as_bytes();
    let n = bytes.len();
    let mut clean_from = 0;
    let mut i = 0;
    while i < n {
        i = skip_clean_words(bytes, i, special);
        if i >= n {
            break;
        }
        let b = bytes[i];
        if b < 0x80 {
            let class = ASCII_CLASS[b as usize];
            if class != 0 {
                out.push_str(&text[clean_from..i]);
                match b {
                    b'"' => push_escape(out, quoted, b"\\\""),
                    b'\\' => push_escape(out, quoted, b"\\\\"),
                    0x08 => push_escape(out, quoted, b"\\b"),
                    0x0C => push_escape(out, quoted, b"\\f"),
                    b'\n' => push_escape(out, quoted, b"\\n"),
                    b'\r' => push_escape(out, quoted, b"\\r"),
                    b'\t' => push_escape(out, quoted, b"\\t"),
                    _ => push_unicode_escape(out, quoted, b as u32),
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
                push_unicode_escape(out, quoted, 0xD800 | (v >> 10));
                push_unicode_escape(out, quoted, 0xDC00 | (v & 0x3FF));
            } else {
                push_unicode_escape(out, quoted, cp);
            }
            clean_from = i + len;
        }
        i += len;
    }
    out.push_str(&text[clean_from..]);
    out.push_str(if quoted { "\\\"" } else { "\"" });
}
