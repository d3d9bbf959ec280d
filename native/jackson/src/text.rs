//! JSON text as Jackson (JsonConverter's ObjectMapper) writes it. Shared by ``converters._jackson`` and, through a
//! ``#[path]`` module, by the MongoDB extension's ExtractNewDocumentState writer (``native/src/unwrap.rs``).

const HEX_UPPER: &[u8; 16] = b"0123456789ABCDEF";

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// Non-zero when one of the 8 bytes of ``word`` needs attention: a control character, ``"``, ``\\``, or the lead
/// byte of a character outside the BMP (exact as a whole; which byte is found byte by byte).
#[inline]
pub fn special(word: u64) -> u64 {
    let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let control = word.wrapping_sub(ONES * 0x20) & !word & HIGH;
    control | zero(word ^ (ONES * 0x22)) | zero(word ^ (ONES * 0x5C)) | zero((word & (ONES * 0xF0)) ^ (ONES * 0xF0))
}

/// The first position from ``i`` on of the 8-byte word of ``bytes`` where ``special`` finds a byte needing
/// attention (or the start of the last, shorter word): the clean words in between are skipped whole.
#[inline]
pub fn skip_clean_words(bytes: &[u8], mut i: usize, special: impl Fn(u64) -> u64) -> usize {
    while i + 8 <= bytes.len() {
        let mut word = [0u8; 8];
        word.copy_from_slice(&bytes[i..i + 8]);
        if special(u64::from_le_bytes(word)) != 0 {
            break;
        }
        i += 8;
    }
    i
}

#[inline]
fn is_special(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\' || b >= 0xF0
}

/// Appends ``text`` quoted as Jackson writes it: ``\"``, ``\\``, ``\b\t\n\f\r``, other control characters as
/// upper-case ``\u00XX``, characters outside the BMP as an upper-case surrogate pair escape, everything else as is.
pub fn push_jackson_string(out: &mut String, text: &str) {
    out.push('"');
    push_jackson_content(out, text);
    out.push('"');
}

/// :func:`push_jackson_string` without the quotes: a piece of a string's content (escaping is per character, so
/// the pieces of a text escaped one by one give the escaped text).
pub fn push_jackson_content(out: &mut String, text: &str) {
    let bytes = text.as_bytes();
    let n = bytes.len();
    let mut clean = 0;
    let mut i = 0;
    loop {
        i = skip_clean_words(bytes, i, special);
        while i < n && !is_special(bytes[i]) {
            i += 1;
        }
        if i >= n {
            break;
        }
        out.push_str(&text[clean..i]);
        let b = bytes[i];
        if b >= 0xF0 {
            let ch = text[i..].chars().next().unwrap_or('\u{FFFD}');
            let code = ch as u32 - 0x10000;
            push_u_escape(out, 0xD800 + (code >> 10));
            push_u_escape(out, 0xDC00 + (code & 0x3FF));
            i += ch.len_utf8();
        } else {
            match b {
                b'"' => out.push_str("\\\""),
                b'\\' => out.push_str("\\\\"),
                0x08 => out.push_str("\\b"),
                0x09 => out.push_str("\\t"),
                0x0A => out.push_str("\\n"),
                0x0C => out.push_str("\\f"),
                0x0D => out.push_str("\\r"),
                _ => push_u_escape(out, b as u32),
            }
            i += 1;
        }
        clean = i;
    }
    out.push_str(&text[clean..]);
}

fn push_u_escape(out: &mut String, unit: u32) {
    out.push_str("\\u");
    for shift in [12, 8, 4, 0] {
        out.push(HEX_UPPER[((unit >> shift) & 0xF) as usize] as char);
    }
}

/// Appends the decimal text of ``value``.
pub fn push_int(out: &mut String, value: i64) {
    let mut digits = [0u8; 20];
    let mut n = value.unsigned_abs();
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if value < 0 {
        out.push('-');
    }
    out.push_str(std::str::from_utf8(&digits[at..]).unwrap_or("0"));
}
