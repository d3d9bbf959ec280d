//! Numbers as the Java driver writes them: ``Double.toString`` (JDK 19+) and Decimal128's string form.

use std::fmt::Write;

/// At most this many significant digits come out of Ryu (17) or ``{:.1e}`` (2).
const MAX_DIGITS: usize = 24;

/// Significant digits (no leading or trailing zeros, "0" for zero) and the decimal point position of a
/// positive finite double printed by Ryu or by ``{:e}``: value = 0.<digits> * 10^point. The digits are
/// ``digits[..len]``; returns (len, point).
fn split_digits(text: &str, digits: &mut [u8; MAX_DIGITS]) -> (usize, i32) {
    let bytes = text.as_bytes();
    let (mantissa, exponent) = match bytes.iter().position(|&b| b == b'e' || b == b'E') {
        Some(at) => (&bytes[..at], text[at + 1..].parse::<i32>().unwrap_or(0)),
        None => (bytes, 0),
    };
    let whole = mantissa.iter().position(|&b| b == b'.').unwrap_or(mantissa.len());
    let mut len = 0;
    let mut leading = 0i32;
    for &b in mantissa.iter().filter(|&&b| b != b'.') {
        if len == 0 && b == b'0' {
            leading += 1;
        } else if len < MAX_DIGITS {
            digits[len] = b;
            len += 1;
        }
    }
    while len > 0 && digits[len - 1] == b'0' {
        len -= 1;
    }
    if len == 0 {
        digits[0] = b'0';
        len = 1;
    }
    (len, whole as i32 + exponent - leading)
}

/// Java's layout of 0.<digits> * 10^point: plain in [1e-3, 1e7), else d.dddE<n> (d.dddE+<n> for a non-negative
/// exponent with ``plus``, as the MongoDB Java driver 5.9 writes a double).
fn java_text(out: &mut String, digits: &[u8], point: i32, plus: bool) {
    let push = |out: &mut String, ds: &[u8]| {
        for &d in ds {
            out.push(d as char);
        }
    };
    if (-2..=7).contains(&point) {
        if point <= 0 {
            out.push_str("0.");
            for _ in 0..-point {
                out.push('0');
            }
            push(out, digits);
        } else if point as usize >= digits.len() {
            push(out, digits);
            for _ in 0..(point as usize - digits.len()) {
                out.push('0');
            }
            out.push_str(".0");
        } else {
            push(out, &digits[..point as usize]);
            out.push('.');
            push(out, &digits[point as usize..]);
        }
    } else {
        out.push(digits[0] as char);
        out.push('.');
        if digits.len() > 1 {
            push(out, &digits[1..]);
        } else {
            out.push('0');
        }
        let exponent = point - 1;
        let _ = if plus && exponent >= 0 { write!(out, "E+{exponent}") } else { write!(out, "E{exponent}") };
    }
}

/// ``Double.toString(value)``: ``1.0``, ``1.0E7``, ``1.0E-5``, ``-0.0``, ``NaN``, ``-Infinity``, ``4.9E-324``;
/// ``plus``: ``1.0E+7`` (the MongoDB Java driver 5.9's JSON writer).
pub fn java_double(out: &mut String, value: f64, plus: bool) {
    if value.is_nan() {
        out.push_str("NaN");
        return;
    }
    if value.is_infinite() {
        out.push_str(if value > 0.0 { "Infinity" } else { "-Infinity" });
        return;
    }
    if value == 0.0 {
        out.push_str(if value.is_sign_negative() { "-0.0" } else { "0.0" });
        return;
    }
    let magnitude = value.abs();
    let mut buffer = ryu::Buffer::new();
    let mut digits = [0u8; MAX_DIGITS];
    let (mut len, mut point) = split_digits(buffer.format_finite(magnitude), &mut digits);
    if len == 1 && magnitude < f64::MIN_POSITIVE {
        // Java prints at least two digits: the closest two-digit decimal (4.9E-324, not 5E-324). For a normal
        // double whose shortest decimal has one digit d, that is d.0: the double is within half an ulp (~1e-16
        // of it) of d*10^k, far closer than the 0.05*10^k that would round to another two-digit decimal.
        let text = format!("{magnitude:.1e}");
        (len, point) = split_digits(&text, &mut digits);
    }
    if value < 0.0 {
        out.push('-');
    }
    java_text(out, &digits[..len], point, plus);
}

/// A double in Extended JSON v2 RELAXED: the number, or ``{"$numberDouble": "..."}`` when not finite.
pub fn relaxed_double(out: &mut String, value: f64, plus: bool) {
    if value.is_finite() {
        java_double(out, value, plus);
    } else {
        out.push_str("{\"$numberDouble\": \"");
        java_double(out, value, plus);
        out.push_str("\"}");
    }
}

/// Decimal128 (little-endian 16 bytes) as ``str(bson.decimal128.Decimal128)`` prints it (Python's Decimal
/// to-scientific-string, the form the BSON spec and the Java driver use).
pub fn decimal128(out: &mut String, raw: &[u8; 16]) {
    let low = u64::from_le_bytes(raw[..8].try_into().unwrap_or([0; 8]));
    let high = u64::from_le_bytes(raw[8..].try_into().unwrap_or([0; 8]));
    let negative = high & (1 << 63) != 0;
    const NAN: u64 = 0x7C00_0000_0000_0000;
    const INF: u64 = 0x7800_0000_0000_0000;
    const EXPONENT_MASK: u64 = 0x6000_0000_0000_0000;
    let sign = if negative { "-" } else { "" };
    if high & NAN == NAN {
        // signalling or quiet, either sign: "NaN" (the drivers spec, as MongoDB prints it)
        out.push_str("NaN");
        return;
    }
    if high & INF == INF {
        let _ = write!(out, "{sign}Infinity");
        return;
    }
    let (coefficient, exponent): (u128, i32) = if high & EXPONENT_MASK == EXPONENT_MASK {
        // pymongo: the coefficient of this form is out of range, it reads as zero
        (0, ((high & 0x1FFF_E000_0000_0000) >> 47) as i32 - 6176)
    } else {
        let coefficient = (((high & 0x0001_FFFF_FFFF_FFFF) as u128) << 64) | low as u128;
        // pymongo: a significand of more than 34 digits reads as zero
        let coefficient = if coefficient > 9_999_999_999_999_999_999_999_999_999_999_999 { 0 } else { coefficient };
        (coefficient, ((high & 0x7FFF_8000_0000_0000) >> 49) as i32 - 6176)
    };
    out.push_str(sign);
    let digits = coefficient.to_string();
    let n = digits.len() as i32;
    let adjusted = exponent + n - 1;
    if exponent <= 0 && adjusted >= -6 {
        if exponent == 0 {
            out.push_str(&digits);
        } else {
            let point = n + exponent;
            if point > 0 {
                out.push_str(&digits[..point as usize]);
                out.push('.');
                out.push_str(&digits[point as usize..]);
            } else {
                out.push_str("0.");
                for _ in 0..-point {
                    out.push('0');
                }
                out.push_str(&digits);
            }
        }
    } else {
        out.push_str(&digits[..1]);
        if n > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(out, "E{}{}", if adjusted >= 0 { "+" } else { "-" }, adjusted.abs());
    }
}
