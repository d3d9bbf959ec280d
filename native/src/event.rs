//! A change event read in one pass for the connector's common case (``scan_event``): a data event outside any
//! session whose fields all have the types a server sends, with everything its record needs taken out of its
//! bytes, so the event is never decoded into Python objects. Anything else is left to the decoding path (None).

use crate::writer::{string_value, u64_at, Elements, Flavour, Writer};

/// Python's ``datetime`` range in milliseconds (years 1-9999): a ``wallTime`` outside it is decoded otherwise.
const MIN_DATETIME_MS: i64 = -62_135_596_800_000;
const MAX_DATETIME_MS: i64 = 253_402_300_799_999;
const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// What the record of a plain data event is made of.
pub struct Scanned<'a> {
    /// Debezium's ``op``: ``c``, ``u`` (update, replace) or ``d``
    pub op: &'static str,
    pub db: &'a str,
    pub coll: &'a str,
    /// the ``_id`` (resume token) document
    pub token: &'a [u8],
    /// the ``documentKey`` document (None: absent or null)
    pub key: Option<&'a [u8]>,
    pub full: Option<&'a [u8]>,
    pub before: Option<&'a [u8]>,
    /// an update's ``updateDescription.updatedFields`` (None: no ``updateDescription``)
    pub updated: Option<&'a [u8]>,
    pub sec: u32,
    pub inc: u32,
    /// ``wallTime`` in milliseconds, 0 without one (as the decoding path counts it)
    pub wall_ms: i64,
}

/// Fields seen, to refuse an event that repeats one (a decoded event keeps the last; not worth following here).
#[derive(Default)]
struct Seen(u16);

impl Seen {
    fn first(&mut self, bit: u16) -> bool {
        let new = self.0 & bit == 0;
        self.0 |= bit;
        new
    }
}

/// An embedded document, or None for BSON null; Err(()) for any other type.
fn document_or_null(tag: u8, value: &[u8]) -> Result<Option<&[u8]>, ()> {
    match tag {
        0x03 => Ok(Some(value)),
        0x0A => Ok(None),
        _ => Err(()),
    }
}

/// ``updatedFields`` of an ``updateDescription`` that has nothing else to write: no removed fields, no truncated
/// arrays, no other member.
fn updated_fields(description: &[u8]) -> Option<&[u8]> {
    let mut updated = None;
    let mut seen = Seen::default();
    for element in Elements::new(description).ok()? {
        let element = element.ok()?;
        match element.name {
            "updatedFields" if element.tag == 0x03 && seen.first(1) => updated = Some(element.value),
            // an empty array is 5 bytes: its length and the trailing NUL
            "removedFields" if element.tag == 0x04 && element.value.len() == 5 && seen.first(2) => {}
            "truncatedArrays" if element.tag == 0x04 && element.value.len() == 5 && seen.first(4) => {}
            "removedFields" | "truncatedArrays" if element.tag == 0x0A => {}
            _ => return None,
        }
    }
    updated
}

/// ``db`` and ``coll`` of an ``ns`` document (both strings), ignoring anything else it holds.
fn namespace(ns: &[u8]) -> Option<(&str, &str)> {
    let (mut db, mut coll) = (None, None);
    for element in Elements::new(ns).ok()? {
        let element = element.ok()?;
        match element.name {
            "db" if element.tag == 0x02 && db.is_none() => db = Some(string_value(element.value).ok()?),
            "coll" if element.tag == 0x02 && coll.is_none() => coll = Some(string_value(element.value).ok()?),
            "db" | "coll" => return None,
            _ => {}
        }
    }
    Some((db?, coll?))
}

/// The event ``raw`` if it is an ``insert``, ``update``, ``replace`` or ``delete`` outside a session (no ``lsid``,
/// ``txnNumber``) and not split (``splitEvent``), whose resume token is a document, with an ``ns`` naming a
/// collection, a ``clusterTime`` timestamp (or none), a ``wallTime`` date (or none) and an ``updateDescription``
/// (updates only) of updated fields alone; None for anything else, malformed BSON included.
pub fn scan(raw: &[u8]) -> Option<Scanned<'_>> {
    let mut seen = Seen::default();
    let (mut op, mut ns, mut token, mut key) = (None, None, None, None);
    let (mut full, mut before, mut description) = (None, None, None);
    let (mut sec, mut inc, mut wall_ms) = (0u32, 0u32, 0i64);
    for element in Elements::new(raw).ok()? {
        let element = element.ok()?;
        let (tag, value) = (element.tag, element.value);
        match element.name {
            "_id" if tag == 0x03 && seen.first(1) => token = Some(value),
            "operationType" if tag == 0x02 && seen.first(2) => {
                op = Some(match string_value(value).ok()? {
                    "insert" => "c",
                    "update" | "replace" => "u",
                    "delete" => "d",
                    _ => return None,
                })
            }
            "ns" if tag == 0x03 && seen.first(4) => ns = Some(namespace(value)?),
            "clusterTime" if tag == 0x11 && seen.first(8) => {
                let word = u64_at(value, 0).ok()?;
                (sec, inc) = ((word >> 32) as u32, word as u32);
            }
            "wallTime" if seen.first(16) => match tag {
                0x09 => {
                    let ms = u64_at(value, 0).ok()? as i64;
                    if !(MIN_DATETIME_MS..=MAX_DATETIME_MS).contains(&ms) {
                        return None;
                    }
                    wall_ms = ms;
                }
                0x0A => {}
                _ => return None,
            },
            "documentKey" if seen.first(32) => key = document_or_null(tag, value).ok()?,
            "fullDocument" if seen.first(64) => full = document_or_null(tag, value).ok()?,
            "fullDocumentBeforeChange" if seen.first(128) => before = document_or_null(tag, value).ok()?,
            "updateDescription" if tag == 0x03 && seen.first(256) => description = Some(updated_fields(value)?),
            "_id" | "operationType" | "ns" | "clusterTime" | "wallTime" | "documentKey" | "fullDocument"
            | "fullDocumentBeforeChange" | "updateDescription" | "lsid" | "txnNumber" | "splitEvent" => return None,
            _ => {}
        }
    }
    let op = op?;
    if description.is_some() && op != "u" {
        return None;
    }
    let (db, coll) = ns?;
    Some(Scanned { op, db, coll, token: token?, key, full, before, updated: description, sec, inc, wall_ms })
}

/// The record key's ``id`` text of a ``documentKey`` document: its ``_id`` in compact RELAXED Extended JSON,
/// ``null`` without one; None where the writer fails (the decoding path then words the error).
pub fn key_id(key: &[u8], plus_exponent: bool) -> Option<String> {
    let mut w = Writer::new(Flavour::RelaxedCompact, 64).plus_exponent(plus_exponent);
    match w.named_value(key, "_id") {
        Ok(true) => Some(w.finish()),
        Ok(false) => Some("null".to_owned()),
        Err(_) => None,
    }
}

/// Standard Base64 with padding (the offset's ``resume_token``).
pub fn base64(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let word = (u32::from(chunk[0]) << 16)
            | (u32::from(*chunk.get(1).unwrap_or(&0)) << 8)
            | u32::from(*chunk.get(2).unwrap_or(&0));
        for (i, shift) in [18u32, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(BASE64[((word >> shift) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}
