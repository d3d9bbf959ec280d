//! The walk over raw BSON. Each BSON type is written as ``extjson.py`` writes the value pymongo decodes from it
//! (connector codec options: ``uuidRepresentation=standard``), which is what the Java driver's JsonWriter writes.

use std::fmt::Write;

use crate::jackson_text::{push_int, push_jackson_content};
use crate::numbers::{decimal128, java_double, relaxed_double};
use crate::strings::{push_java_string, push_string};

type R<T> = Result<T, &'static str>;

#[derive(Clone, Copy)]
pub enum Flavour {
    /// v1 STRICT, compact (",")
    Strict,
    /// v2 RELAXED, compact (",")
    RelaxedCompact,
    /// v2 RELAXED, driver default (", ")
    RelaxedDefault,
}

pub struct Writer {
    out: String,
    relaxed: bool,
    sep: &'static str,
    plus_exponent: bool,
    /// written as the content of a JSON string (Jackson's escaping of the text, in the same pass)
    quoted: bool,
}

const MAX_ISO_MS: i64 = 253_402_300_799_999; // 9999-12-31T23:59:59.999Z
const MAX_DEPTH: u32 = 200;
const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const HEX: &[u8; 16] = b"0123456789abcdef";
const HEX_UPPER: &[u8; 16] = b"0123456789ABCDEF";

fn i32_at(data: &[u8], pos: usize) -> R<i32> {
    let bytes = data.get(pos..pos + 4).ok_or("truncated")?;
    Ok(i32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
}

pub(crate) fn u64_at(data: &[u8], pos: usize) -> R<u64> {
    let bytes = data.get(pos..pos + 8).ok_or("truncated")?;
    let mut word = [0u8; 8];
    word.copy_from_slice(bytes);
    Ok(u64::from_le_bytes(word))
}

/// A NUL-terminated UTF-8 string at ``pos``: (text, position after the NUL).
fn cstring(data: &[u8], pos: usize) -> R<(&str, usize)> {
    let rest = data.get(pos..).ok_or("truncated")?;
    let end = rest.iter().position(|&b| b == 0).ok_or("unterminated cstring")?;
    let text = std::str::from_utf8(&rest[..end]).map_err(|_| "invalid UTF-8 in a name or regex")?;
    Ok((text, pos + end + 1))
}

/// A BSON string value (int32 length including the NUL, bytes, NUL).
pub(crate) fn string_value(value: &[u8]) -> R<&str> {
    let len = i32_at(value, 0)?;
    if len < 1 || value.len() < 4 + len as usize || value[3 + len as usize] != 0 {
        return Err("bad string length");
    }
    std::str::from_utf8(&value[4..3 + len as usize]).map_err(|_| "invalid UTF-8 in a string")
}

/// One element of a document: its type, name and value bytes.
pub(crate) struct Element<'a> {
    pub tag: u8,
    pub name: &'a str,
    pub value: &'a [u8],
}

/// The elements of one document (the whole document's bytes, length prefix and trailing NUL included).
pub(crate) struct Elements<'a> {
    data: &'a [u8],
    pos: usize,
    end: usize,
}

impl<'a> Elements<'a> {
    pub(crate) fn new(doc: &'a [u8]) -> R<Self> {
        let len = i32_at(doc, 0)?;
        if len < 5 || len as usize > doc.len() || doc[len as usize - 1] != 0 {
            return Err("bad document length");
        }
        Ok(Elements { data: &doc[..len as usize], pos: 4, end: len as usize - 1 })
    }

    fn value_len(&self, tag: u8, at: usize) -> R<usize> {
        let data = self.data;
        let sized = |extra: i64| -> R<usize> {
            let len = i32_at(data, at)? as i64 + extra;
            if len < 0 {
                Err("negative length")
            } else {
                Ok(len as usize)
            }
        };
        Ok(match tag {
            0x01 | 0x09 | 0x11 | 0x12 => 8,
            0x02 | 0x0D | 0x0E => sized(4)?,
            0x03 | 0x04 | 0x0F => sized(0)?,
            0x05 => sized(5)?,
            0x06 | 0x0A | 0x7F | 0xFF => 0,
            0x07 => 12,
            0x08 => 1,
            0x0B => {
                let (_, after_pattern) = cstring(data, at)?;
                let (_, after_options) = cstring(data, after_pattern)?;
                after_options - at
            }
            0x0C => sized(4)? + 12,
            0x10 => 4,
            0x13 => 16,
            _ => return Err("unknown BSON type"),
        })
    }
}

impl<'a> Iterator for Elements<'a> {
    type Item = R<Element<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.pos >= self.end {
            return None;
        }
        let tag = self.data[self.pos];
        let parsed = cstring(self.data, self.pos + 1).and_then(|(name, at)| {
            let len = self.value_len(tag, at)?;
            if at + len > self.end {
                return Err("element overruns its document");
            }
            Ok((Element { tag, name, value: &self.data[at..at + len] }, at + len))
        });
        match parsed {
            Ok((element, next)) => {
                self.pos = next;
                Some(Ok(element))
            }
            Err(e) => {
                self.pos = self.end;
                Some(Err(e))
            }
        }
    }
}

fn is_str(tag: u8) -> bool {
    matches!(tag, 0x02 | 0x0D | 0x0E)
}

/// pymongo decodes an embedded document with a string ``$ref``, an ``$id`` and no ``$db`` or a string/null
/// ``$db`` into a DBRef, which ``extjson.py`` writes as ``$ref``, ``$id``, ``$db`` (unless null), then the rest.
fn dbref_order<'a>(elements: &[Element<'a>]) -> Option<Vec<usize>> {
    let find = |name: &str| elements.iter().position(|e| e.name == name);
    let reference = find("$ref")?;
    let id = find("$id")?;
    if !is_str(elements[reference].tag) {
        return None;
    }
    let db = find("$db");
    let mut order = vec![reference, id];
    if let Some(db) = db {
        match elements[db].tag {
            t if is_str(t) => order.push(db),
            0x0A | 0x06 => {}
            _ => return None,
        }
    }
    order.extend((0..elements.len()).filter(|&i| i != reference && i != id && Some(i) != db));
    Some(order)
}

impl Writer {
    pub fn new(flavour: Flavour, size_hint: usize) -> Self {
        let (relaxed, sep) = match flavour {
            Flavour::Strict => (false, ","),
            Flavour::RelaxedCompact => (true, ","),
            Flavour::RelaxedDefault => (true, ", "),
        };
        Writer {
            out: String::with_capacity(size_hint + size_hint / 2 + 16),
            relaxed,
            sep,
            plus_exponent: false,
            quoted: false,
        }
    }

    /// Doubles with a non-negative exponent written ``1.0E+7`` (the MongoDB Java driver 5.9, Debezium 3.6.3)
    /// rather than ``1.0E7`` (driver 5.6, Debezium 3.6.1).
    pub fn plus_exponent(mut self, plus: bool) -> Self {
        self.plus_exponent = plus;
        self
    }

    /// The text written as the content of a JSON string, as Jackson writes that string (JsonConverter's bytes
    /// of an envelope's ``after``), without the surrounding quotes.
    pub fn quoted(mut self, quoted: bool) -> Self {
        self.quoted = quoted;
        self
    }

    /// Writes after what ``out`` holds already (instead of into a new buffer).
    pub fn appending_to(mut self, out: String) -> Self {
        self.out = out;
        self
    }

    pub fn finish(self) -> String {
        self.out
    }

    /// A top-level document (never read as a DBRef, as pymongo decodes it).
    pub fn top_document(&mut self, raw: &[u8]) -> R<()> {
        self.document(raw, false, 0)
    }

    /// The value of the first element of ``raw`` (the key's ``{"_id": ...}``); ``null`` when empty.
    pub fn first_value(&mut self, raw: &[u8]) -> R<()> {
        match Elements::new(raw)?.next() {
            Some(element) => self.value(&element?, 0),
            None => {
                self.out.push_str("null");
                Ok(())
            }
        }
    }

    /// The value of the element named ``name`` of ``raw``; false (nothing written) when there is none.
    pub fn named_value(&mut self, raw: &[u8], name: &str) -> R<bool> {
        for element in Elements::new(raw)? {
            let element = element?;
            if element.name == name {
                self.value(&element, 0)?;
                return Ok(true);
            }
        }
        Ok(false)
    }

    fn document(&mut self, raw: &[u8], embedded: bool, depth: u32) -> R<()> {
        if depth > MAX_DEPTH {
            return Err("nesting too deep");
        }
        let start = self.out.len();
        self.out.push('{');
        for (n, element) in Elements::new(raw)?.enumerate() {
            let element = element?;
            if embedded && element.name == "$ref" {
                // rare: written again from the start, in a DBRef's order if it is one
                self.out.truncate(start);
                return self.dbref_document(raw, depth);
            }
            if n > 0 {
                self.out.push_str(self.sep);
            }
            self.member(&element, depth)?;
        }
        self.out.push('}');
        Ok(())
    }

    /// An embedded document with a ``$ref`` member: a DBRef's members first (see :func:`dbref_order`) when it is
    /// one, else in their order.
    fn dbref_document(&mut self, raw: &[u8], depth: u32) -> R<()> {
        let elements = Elements::new(raw)?.collect::<R<Vec<_>>>()?;
        let order = dbref_order(&elements).unwrap_or_else(|| (0..elements.len()).collect());
        self.out.push('{');
        for (n, &i) in order.iter().enumerate() {
            if n > 0 {
                self.out.push_str(self.sep);
            }
            self.member(&elements[i], depth)?;
        }
        self.out.push('}');
        Ok(())
    }

    fn member(&mut self, element: &Element<'_>, depth: u32) -> R<()> {
        push_string(&mut self.out, element.name, self.quoted);
        self.out.push_str(": ");
        self.value(element, depth)
    }

    fn array(&mut self, raw: &[u8], depth: u32) -> R<()> {
        if depth > MAX_DEPTH {
            return Err("nesting too deep");
        }
        self.out.push('[');
        for (n, element) in Elements::new(raw)?.enumerate() {
            if n > 0 {
                self.out.push_str(self.sep);
            }
            self.value(&element?, depth)?;
        }
        self.out.push(']');
        Ok(())
    }

    fn value(&mut self, element: &Element<'_>, depth: u32) -> R<()> {
        if self.quoted {
            return self.quoted_value(element, depth);
        }
        let v = element.value;
        let out = &mut self.out;
        match element.tag {
            0x01 => {
                let value = f64::from_bits(u64_at(v, 0)?);
                if self.relaxed {
                    relaxed_double(out, value, self.plus_exponent);
                } else {
                    java_double(out, value, self.plus_exponent);
                }
            }
            0x02 | 0x0E => push_java_string(out, string_value(v)?),
            0x03 => self.document(v, true, depth + 1)?,
            0x04 => self.array(v, depth + 1)?,
            0x05 => self.binary(v)?,
            0x06 | 0x0A => out.push_str("null"),
            0x07 => {
                out.push_str("{\"$oid\": \"");
                for &b in v {
                    out.push(HEX[(b >> 4) as usize] as char);
                    out.push(HEX[(b & 0xF) as usize] as char);
                }
                out.push_str("\"}");
            }
            0x08 => match v[0] {
                0 => out.push_str("false"),
                1 => out.push_str("true"),
                _ => return Err("invalid boolean"),
            },
            0x09 => {
                let millis = u64_at(v, 0)? as i64;
                if !self.relaxed {
                    let _ = write!(out, "{{\"$date\": {millis}}}");
                } else if (0..=MAX_ISO_MS).contains(&millis) {
                    out.push_str("{\"$date\": \"");
                    iso_millis(out, millis);
                    out.push_str("\"}");
                } else {
                    let _ = write!(out, "{{\"$date\": {{\"$numberLong\": \"{millis}\"}}}}");
                }
            }
            0x0B => {
                let (pattern, at) = cstring(v, 0)?;
                let (flags, _) = cstring(v, at)?;
                let options: String = "ilmsux".chars().filter(|&c| flags.contains(c)).collect();
                if self.relaxed {
                    out.push_str("{\"$regularExpression\": {\"pattern\": ");
                    push_java_string(out, pattern);
                    let _ = write!(out, "{}\"options\": \"{options}\"}}}}", self.sep);
                } else {
                    out.push_str("{\"$regex\": ");
                    push_java_string(out, pattern);
                    let _ = write!(out, ",\"$options\": \"{options}\"}}");
                }
            }
            0x0C => {
                let collection = string_value(v)?;
                let oid = &v[v.len() - 12..];
                out.push_str("{\"$ref\": ");
                push_java_string(out, collection);
                let _ = write!(out, "{}\"$id\": {{\"$oid\": \"", self.sep);
                for &b in oid {
                    out.push(HEX[(b >> 4) as usize] as char);
                    out.push(HEX[(b & 0xF) as usize] as char);
                }
                out.push_str("\"}}");
            }
            0x0D => {
                out.push_str("{\"$code\": ");
                push_java_string(out, string_value(v)?);
                out.push('}');
            }
            0x0F => {
                let code = string_value(v.get(4..).ok_or("truncated")?)?;
                let scope_at = 4 + 4 + code.len() + 1;
                out.push_str("{\"$code\": ");
                push_java_string(out, code);
                out.push_str(self.sep);
                out.push_str("\"$scope\": ");
                self.document(v.get(scope_at..).ok_or("truncated")?, false, depth + 1)?;
                self.out.push('}');
            }
            0x10 => {
                let _ = write!(out, "{}", i32_at(v, 0)?);
            }
            0x11 => {
                let word = u64_at(v, 0)?;
                let _ = write!(out, "{{\"$timestamp\": {{\"t\": {}{}\"i\": {}}}}}", word >> 32, self.sep,
                               word & 0xFFFF_FFFF);
            }
            0x12 => {
                let value = u64_at(v, 0)? as i64;
                if self.relaxed {
                    let _ = write!(out, "{value}");
                } else {
                    let _ = write!(out, "{{\"$numberLong\": \"{value}\"}}");
                }
            }
            0x13 => {
                let mut raw = [0u8; 16];
                raw.copy_from_slice(v);
                out.push_str("{\"$numberDecimal\": \"");
                decimal128(out, &raw);
                out.push_str("\"}");
            }
            0x7F => out.push_str("{\"$maxKey\": 1}"),
            0xFF => out.push_str("{\"$minKey\": 1}"),
            _ => return Err("unknown BSON type"),
        }
        Ok(())
    }

    /// :func:`value` as the content of a JSON string: the common types written directly, the others written
    /// plain first and escaped as Jackson escapes a string's content.
    fn quoted_value(&mut self, element: &Element<'_>, depth: u32) -> R<()> {
        let v = element.value;
        match element.tag {
            0x01 if !self.relaxed => java_double(&mut self.out, f64::from_bits(u64_at(v, 0)?), self.plus_exponent),
            0x02 => push_string(&mut self.out, string_value(v)?, true),
            0x03 => self.document(v, true, depth + 1)?,
            0x04 => self.array(v, depth + 1)?,
            0x06 | 0x0A => self.out.push_str("null"),
            0x07 => {
                self.out.push_str("{\\\"$oid\\\": \\\"");
                for &b in v {
                    self.out.push(HEX[(b >> 4) as usize] as char);
                    self.out.push(HEX[(b & 0xF) as usize] as char);
                }
                self.out.push_str("\\\"}");
            }
            0x08 if v[0] <= 1 => self.out.push_str(if v[0] == 1 { "true" } else { "false" }),
            0x09 if !self.relaxed => {
                self.out.push_str("{\\\"$date\\\": ");
                push_int(&mut self.out, u64_at(v, 0)? as i64);
                self.out.push('}');
            }
            0x10 => push_int(&mut self.out, i32_at(v, 0)? as i64),
            0x12 if !self.relaxed => {
                self.out.push_str("{\\\"$numberLong\\\": \\\"");
                push_int(&mut self.out, u64_at(v, 0)? as i64);
                self.out.push_str("\\\"}");
            }
            _ => {
                let mut plain = Writer {
                    out: String::with_capacity(v.len() * 2 + 16),
                    relaxed: self.relaxed,
                    sep: self.sep,
                    plus_exponent: self.plus_exponent,
                    quoted: false,
                };
                plain.value(element, depth)?;
                push_jackson_content(&mut self.out, &plain.out);
            }
        }
        Ok(())
    }

    fn binary(&mut self, v: &[u8]) -> R<()> {
        let len = i32_at(v, 0)? as usize;
        let subtype = v[4];
        let mut data = &v[5..5 + len];
        if subtype == 2 {
            // the old binary subtype repeats the length inside the data
            let inner = i32_at(data, 0)?;
            if inner < 0 || inner as usize + 4 != len {
                return Err("invalid binary (subtype 2): lengths don't match");
            }
            data = &data[4..];
        }
        let out = &mut self.out;
        if self.relaxed {
            out.push_str("{\"$binary\": {\"base64\": \"");
            push_base64(out, data);
            let _ = write!(out, "\"{}\"subType\": \"", self.sep);
        } else {
            out.push_str("{\"$binary\": \"");
            push_base64(out, data);
            out.push_str("\",\"$type\": \"");
        }
        out.push(HEX_UPPER[(subtype >> 4) as usize] as char);
        out.push(HEX_UPPER[(subtype & 0xF) as usize] as char);
        out.push_str(if self.relaxed { "\"}}" } else { "\"}" });
        Ok(())
    }
}

fn push_base64(out: &mut String, data: &[u8]) {
    for chunk in data.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        out.push(BASE64[(n >> 18) as usize & 63] as char);
        out.push(BASE64[(n >> 12) as usize & 63] as char);
        out.push(if chunk.len() > 1 { BASE64[(n >> 6) as usize & 63] as char } else { '=' });
        out.push(if chunk.len() > 2 { BASE64[n as usize & 63] as char } else { '=' });
    }
}

/// ISO-8601 UTC of epoch milliseconds in [0, 9999-12-31T23:59:59.999]: seconds always, the millisecond fraction
/// trimmed of trailing zeros, ``Z``.
fn iso_millis(out: &mut String, millis: i64) {
    let days = millis.div_euclid(86_400_000);
    let in_day = millis.rem_euclid(86_400_000);
    // civil_from_days (Howard Hinnant)
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + if month <= 2 { 1 } else { 0 };
    let seconds = in_day / 1000;
    let _ = write!(out, "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}", seconds / 3600, seconds / 60 % 60,
                   seconds % 60);
    let fraction = in_day % 1000;
    if fraction != 0 {
        let text = format!("{fraction:03}");
        out.push('.');
        out.push_str(text.trim_end_matches('0'));
    }
    out.push('Z');
}

/// A change event split for the connector (:func:`split_event`).
pub struct Split<'a> {
    /// the event without its embedded ``fullDocument`` and ``fullDocumentBeforeChange`` documents
    pub rest: Vec<u8>,
    pub full: Option<&'a [u8]>,
    pub before: Option<&'a [u8]>,
    /// the embedded ``_id`` (the resume token) and ``documentKey`` documents, which stay in ``rest`` too
    pub id: Option<&'a [u8]>,
    pub key: Option<&'a [u8]>,
}

/// A change event split for the connector: the small part is decoded by pymongo, the images stay bytes for the
/// writer; the bytes of the resume token and of the document key are kept for the offset and the record key.
pub fn split_event(raw: &[u8]) -> R<Split<'_>> {
    let mut rest = Vec::with_capacity(256);
    rest.extend_from_slice(&[0, 0, 0, 0]);
    let (mut full, mut before, mut id, mut key) = (None, None, None, None);
    let base = raw.as_ptr() as usize;
    for element in Elements::new(raw)? {
        let element = element?;
        if element.tag == 0x03 && element.name == "fullDocument" {
            full = Some(element.value);
            continue;
        } else if element.tag == 0x03 && element.name == "fullDocumentBeforeChange" {
            before = Some(element.value);
            continue;
        } else if element.tag == 0x03 && element.name == "_id" && id.is_none() {
            id = Some(element.value);
        } else if element.tag == 0x03 && element.name == "documentKey" && key.is_none() {
            key = Some(element.value);
        }
        let start = element.name.as_ptr() as usize - base - 1;
        let end = element.value.as_ptr() as usize - base + element.value.len();
        rest.extend_from_slice(&raw[start..end]);
    }
    rest.push(0);
    let len = (rest.len() as i32).to_le_bytes();
    rest[..4].copy_from_slice(&len);
    Ok(Split { rest, full, before, id, key })
}

/// The value bytes of the first element named ``name`` when it is an embedded document.
pub fn embedded<'a>(raw: &'a [u8], name: &str) -> R<Option<&'a [u8]>> {
    for element in Elements::new(raw)? {
        let element = element?;
        if element.name == name {
            return Ok(if element.tag == 0x03 { Some(element.value) } else { None });
        }
    }
    Ok(None)
}

/// A ``find``/``getMore`` reply taken apart for a raw-batch cursor: the reply with its cursor's batch array
/// (``firstBatch``/``nextBatch``) left empty, so the rest (``ok``, the cursor's ``id`` and ``ns``,
/// ``$clusterTime``, ``operationTime``, an error) is small to decode, and the batch's documents, each as its own
/// bytes. A reply without a cursor comes back whole, with no documents.
pub fn cursor_reply(raw: &[u8]) -> R<(Vec<u8>, Vec<&[u8]>)> {
    let mut rest = Vec::with_capacity(256);
    rest.extend_from_slice(&[0, 0, 0, 0]);
    let mut docs = Vec::new();
    let base = raw.as_ptr() as usize;
    for element in Elements::new(raw)? {
        let element = element?;
        let start = element.name.as_ptr() as usize - base - 1;
        let end = element.value.as_ptr() as usize - base + element.value.len();
        if element.tag != 0x03 || element.name != "cursor" {
            rest.extend_from_slice(&raw[start..end]);
            continue;
        }
        let cursor = element.value;
        let inner = cursor.as_ptr() as usize;
        let at = rest.len();
        rest.extend_from_slice(&raw[start..element.value.as_ptr() as usize - base]); // tag and name
        rest.extend_from_slice(&[0, 0, 0, 0]);
        for field in Elements::new(cursor)? {
            let field = field?;
            if field.tag == 0x04 && (field.name == "firstBatch" || field.name == "nextBatch") {
                for item in Elements::new(field.value)? {
                    let item = item?;
                    if item.tag != 0x03 {
                        return Err("a cursor batch element is not a document");
                    }
                    docs.push(item.value);
                }
                rest.push(0x04);
                rest.extend_from_slice(field.name.as_bytes());
                rest.extend_from_slice(&[0, 5, 0, 0, 0, 0]); // the name's NUL, then an empty array
                continue;
            }
            let from = field.name.as_ptr() as usize - inner - 1;
            let to = field.value.as_ptr() as usize - inner + field.value.len();
            rest.extend_from_slice(&cursor[from..to]);
        }
        rest.push(0);
        let size = ((rest.len() - at) - (element.value.as_ptr() as usize - base - start)) as i32;
        let len_at = at + (element.value.as_ptr() as usize - base - start);
        rest[len_at..len_at + 4].copy_from_slice(&size.to_le_bytes());
    }
    rest.push(0);
    let len = (rest.len() as i32).to_le_bytes();
    rest[..4].copy_from_slice(&len);
    Ok((rest, docs))
}
