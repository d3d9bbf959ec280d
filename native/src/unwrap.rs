//! ExtractNewDocumentState's hot path: the Extended JSON of a change event's ``after`` (as the connector writes it)
//! parsed once, its *shape* (what the inferred Connect schema depends on: field names and order, the BSON type of
//! every value, array lengths, int32 or int64) returned as bytes, and the JsonConverter payload of the Connect value
//! the transform builds from it written straight from the parsed text, following the inferred schema.
//!
//! The schema itself is inferred in Python (``schema_inference.py``, the single source of the inference rules) once
//! per shape and handed back compiled as a :class:`DocumentPlan`. Anything this module does not cover exactly as
//! the Python path does (a wrapper it does not know, duplicate field names, a value that does not fit the plan,
//! a date outside Python's datetime range...) makes it answer None, and the transform takes the Python path.

use std::borrow::Cow;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString, PyTuple};

use crate::jackson_text::{push_int, push_jackson_string, skip_clean_words, special};
use crate::numbers::java_double;

/// Err: not handled here (the caller takes the Python path).
type R<T> = Result<T, ()>;

const MAX_DEPTH: u32 = 200;
/// Python's datetime range in epoch milliseconds (0001-01-01 .. 9999-12-31T23:59:59.999).
const MIN_MILLIS: i64 = -62_135_596_800_000;
const MAX_MILLIS: i64 = 253_402_300_799_999;
const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// A value of the document as ``schema_inference.parse_with_shape`` reads it.
enum Node<'a> {
    Null,
    Bool(bool),
    /// a plain JSON integer (int32 or int64 by its range)
    Int(i64),
    /// ``{"$numberLong": "..."}`` (bson ``Int64``)
    Long(i64),
    Double(f64),
    Str(Cow<'a, str>),
    /// ``{"$date": millis}`` (or ``{"$date": {"$numberLong": ...}}``)
    Date(i64),
    /// ``{"$timestamp": {"t": ..., "i": ...}}``: the seconds (the Connect value is ``t`` seconds after the epoch)
    Stamp(i64),
    /// ``{"$oid": "..."}``: 24 hex digits
    Oid(&'a str),
    /// ``{"$binary": "...", "$type": "XX"}``: the data and the subtype
    Bin(Box<(Vec<u8>, u8)>),
    /// ``{"$regex": ..., "$options": ...}``
    Regex(Box<(Cow<'a, str>, Cow<'a, str>)>),
    Doc(Vec<(Cow<'a, str>, Node<'a>)>),
    Arr(Vec<Node<'a>>),
}

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

fn hex_digit(b: u8) -> R<u32> {
    match b {
        b'0'..=b'9' => Ok((b - b'0') as u32),
        b'a'..=b'f' => Ok((b - b'a' + 10) as u32),
        b'A'..=b'F' => Ok((b - b'A' + 10) as u32),
        _ => Err(()),
    }
}

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Self {
        Parser { text, bytes: text.as_bytes(), pos: 0 }
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    fn expect(&mut self, byte: u8) -> R<()> {
        self.skip_ws();
        if self.bytes.get(self.pos) == Some(&byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(())
        }
    }

    fn document(mut self) -> R<Node<'a>> {
        let node = self.value(0)?;
        self.skip_ws();
        if self.pos != self.bytes.len() || !matches!(node, Node::Doc(_)) {
            return Err(());
        }
        Ok(node)
    }

    fn value(&mut self, depth: u32) -> R<Node<'a>> {
        if depth > MAX_DEPTH {
            return Err(());
        }
        self.skip_ws();
        match self.bytes.get(self.pos) {
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => Ok(Node::Str(self.string()?)),
            Some(b't') => self.literal("true", Node::Bool(true)),
            Some(b'f') => self.literal("false", Node::Bool(false)),
            Some(b'n') => self.literal("null", Node::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(()),
        }
    }

    fn literal(&mut self, word: &str, node: Node<'a>) -> R<Node<'a>> {
        if self.bytes[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(node)
        } else {
            Err(())
        }
    }

    fn number(&mut self) -> R<Node<'a>> {
        let start = self.pos;
        let b = self.bytes;
        let mut i = self.pos;
        if b.get(i) == Some(&b'-') {
            i += 1;
        }
        let digits = |mut i: usize| {
            while let Some(b'0'..=b'9') = b.get(i) {
                i += 1;
            }
            i
        };
        let int_end = digits(i);
        if int_end == i || (b[i] == b'0' && int_end > i + 1) {
            return Err(());
        }
        i = int_end;
        let mut float = false;
        if b.get(i) == Some(&b'.') {
            let end = digits(i + 1);
            if end == i + 1 {
                return Err(());
            }
            i = end;
            float = true;
        }
        if let Some(b'e' | b'E') = b.get(i) {
            i += 1;
            if let Some(b'+' | b'-') = b.get(i) {
                i += 1;
            }
            let end = digits(i);
            if end == i {
                return Err(());
            }
            i = end;
            float = true;
        }
        self.pos = i;
        let text = &self.text[start..i];
        if float {
            let value: f64 = text.parse().map_err(|_| ())?;
            if !value.is_finite() {
                return Err(());
            }
            Ok(Node::Double(value))
        } else {
            Ok(Node::Int(text.parse().map_err(|_| ())?))
        }
    }

    fn hex4(&mut self) -> R<u32> {
        let quad = self.bytes.get(self.pos..self.pos + 4).ok_or(())?;
        let mut unit = 0;
        for &d in quad {
            unit = unit * 16 + hex_digit(d)?;
        }
        self.pos += 4;
        Ok(unit)
    }

    /// A JSON string at ``pos`` (the opening quote): borrowed when it has no escapes.
    fn string(&mut self) -> R<Cow<'a, str>> {
        self.pos += 1;
        let start = self.pos;
        let b = self.bytes;
        let mut i = skip_clean_words(b, start, special);
        while i < b.len() && b[i] != b'"' && b[i] != b'\\' {
            if b[i] < 0x20 {
                return Err(());
            }
            i += 1;
        }
        if i >= b.len() {
            return Err(());
        }
        if b[i] == b'"' {
            self.pos = i + 1;
            return Ok(Cow::Borrowed(&self.text[start..i]));
        }
        let mut out = String::with_capacity(i - start + 16);
        out.push_str(&self.text[start..i]);
        self.pos = i;
        loop {
            let clean = self.pos;
            while self.pos < b.len() && b[self.pos] != b'"' && b[self.pos] != b'\\' {
                if b[self.pos] < 0x20 {
                    return Err(());
                }
                self.pos += 1;
            }
            out.push_str(&self.text[clean..self.pos]);
            match b.get(self.pos) {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(Cow::Owned(out));
                }
                Some(b'\\') => {
                    self.pos += 1;
                    let escape = *b.get(self.pos).ok_or(())?;
                    self.pos += 1;
                    match escape {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let unit = self.hex4()?;
                            let code = if (0xD800..0xDC00).contains(&unit) {
                                // a surrogate pair; a lone surrogate is left to the Python path
                                if b.get(self.pos..self.pos + 2) != Some(b"\\u") {
                                    return Err(());
                                }
                                self.pos += 2;
                                let low = self.hex4()?;
                                if !(0xDC00..0xE000).contains(&low) {
                                    return Err(());
                                }
                                0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                            } else if (0xDC00..0xE000).contains(&unit) {
                                return Err(());
                            } else {
                                unit
                            };
                            out.push(char::from_u32(code).ok_or(())?);
                        }
                        _ => return Err(()),
                    }
                }
                _ => return Err(()),
            }
        }
    }

    fn array(&mut self, depth: u32) -> R<Node<'a>> {
        self.pos += 1;
        let mut items = Vec::with_capacity(8);
        self.skip_ws();
        if self.bytes.get(self.pos) == Some(&b']') {
            self.pos += 1;
            return Ok(Node::Arr(items));
        }
        loop {
            items.push(self.value(depth + 1)?);
            self.skip_ws();
            match self.bytes.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Node::Arr(items));
                }
                _ => return Err(()),
            }
        }
    }

    fn object(&mut self, depth: u32) -> R<Node<'a>> {
        self.pos += 1;
        let mut entries: Vec<(Cow<'a, str>, Node<'a>)> = Vec::with_capacity(8);
        self.skip_ws();
        if self.bytes.get(self.pos) == Some(&b'}') {
            self.pos += 1;
            return Ok(Node::Doc(entries));
        }
        loop {
            self.skip_ws();
            if self.bytes.get(self.pos) != Some(&b'"') {
                return Err(());
            }
            let key = self.string()?;
            self.expect(b':')?;
            let value = self.value(depth + 1)?;
            entries.push((key, value));
            self.skip_ws();
            match self.bytes.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    break;
                }
                _ => return Err(()),
            }
        }
        if entries[0].0.starts_with('$') {
            return wrapper(entries);
        }
        // a repeated name: Python's dict keeps one (the first position, the last value); left to the Python path
        if entries.len() <= 16 {
            for i in 1..entries.len() {
                if entries[..i].iter().any(|(k, _)| *k == entries[i].0) {
                    return Err(());
                }
            }
        } else {
            let mut names: Vec<&str> = entries.iter().map(|(k, _)| k.as_ref()).collect();
            names.sort_unstable();
            if names.windows(2).any(|w| w[0] == w[1]) {
                return Err(());
            }
        }
        Ok(Node::Doc(entries))
    }
}

/// An Extended JSON wrapper (an object whose first name starts with ``$``), for the forms the connector writes.
fn wrapper<'a>(mut entries: Vec<(Cow<'a, str>, Node<'a>)>) -> R<Node<'a>> {
    let names: Vec<&str> = entries.iter().map(|(k, _)| k.as_ref()).collect();
    match names.as_slice() {
        ["$numberLong"] => match &entries[0].1 {
            Node::Str(text) => Ok(Node::Long(plain_integer(text)?)),
            _ => Err(()),
        },
        ["$date"] => match entries[0].1 {
            Node::Int(millis) | Node::Long(millis) => Ok(Node::Date(millis)),
            _ => Err(()),
        },
        ["$oid"] => match entries.pop() {
            Some((_, Node::Str(Cow::Borrowed(hex)))) if hex.len() == 24 && hex.bytes().all(|b| b.is_ascii_hexdigit()) => {
                Ok(Node::Oid(hex))
            }
            _ => Err(()),
        },
        ["$regex", "$options"] => {
            let options = entries.pop().ok_or(())?.1;
            let pattern = entries.pop().ok_or(())?.1;
            match (pattern, options) {
                (Node::Str(pattern), Node::Str(options)) => Ok(Node::Regex(Box::new((pattern, options)))),
                _ => Err(()),
            }
        }
        ["$binary", "$type"] => match (&entries[0].1, &entries[1].1) {
            (Node::Str(data), Node::Str(kind)) if kind.len() == 2 => {
                let subtype = (hex_digit(kind.as_bytes()[0])? * 16 + hex_digit(kind.as_bytes()[1])?) as u8;
                Ok(Node::Bin(Box::new((base64_decode(data)?, subtype))))
            }
            _ => Err(()),
        },
        ["$timestamp"] => match &entries[0].1 {
            Node::Doc(parts) => match parts.as_slice() {
                [(t, Node::Int(seconds)), (i, Node::Int(inc))]
                    if t == "t" && i == "i" && (0..1 << 32).contains(seconds) && (0..1 << 32).contains(inc) =>
                {
                    // the seconds as Java's BsonTimestamp.getTime() reads them: a signed int (Debezium's SMT)
                    Ok(Node::Stamp(*seconds as u32 as i32 as i64))
                }
                _ => Err(()),
            },
            _ => Err(()),
        },
        _ => Err(()),
    }
}

/// ``-?[0-9]+`` as an i64.
fn plain_integer(text: &str) -> R<i64> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(());
    }
    text.parse().map_err(|_| ())
}

/// Canonical (padded) base64; anything else is left to the Python path.
fn base64_decode(text: &str) -> R<Vec<u8>> {
    let b = text.as_bytes();
    if b.len() % 4 != 0 {
        return Err(());
    }
    let value = |c: u8| -> R<u32> {
        match c {
            b'A'..=b'Z' => Ok((c - b'A') as u32),
            b'a'..=b'z' => Ok((c - b'a' + 26) as u32),
            b'0'..=b'9' => Ok((c - b'0' + 52) as u32),
            b'+' => Ok(62),
            b'/' => Ok(63),
            _ => Err(()),
        }
    };
    let mut out = Vec::with_capacity(b.len() / 4 * 3);
    for (n, chunk) in b.chunks(4).enumerate() {
        let last = n == b.len() / 4 - 1;
        let pad = chunk.iter().rev().take_while(|&&c| c == b'=').count();
        if pad > 2 || (pad > 0 && !last) {
            return Err(());
        }
        let mut word = 0u32;
        for &c in &chunk[..4 - pad] {
            word = word << 6 | value(c)?;
        }
        word <<= 6 * pad as u32;
        out.push((word >> 16) as u8);
        if pad < 2 {
            out.push((word >> 8) as u8);
        }
        if pad < 1 {
            out.push(word as u8);
        }
    }
    Ok(out)
}

/// The shape of a value: one letter per BSON type (as ``schema_inference._kind`` tells them apart), names
/// prefixed with their length (a varint), documents ``{...}``, arrays ``[...]``.
fn shape(node: &Node<'_>, out: &mut Vec<u8>) {
    match node {
        Node::Null => out.push(b'n'),
        Node::Bool(_) => out.push(b'b'),
        Node::Int(v) => out.push(if i32::try_from(*v).is_ok() { b'i' } else { b'l' }),
        Node::Long(_) => out.push(b'L'),
        Node::Double(_) => out.push(b'd'),
        Node::Str(_) => out.push(b's'),
        Node::Date(_) => out.push(b'D'),
        Node::Stamp(_) => out.push(b'T'),
        Node::Oid(_) => out.push(b'o'),
        Node::Bin(bin) => out.push(if bin.1 == 0 { b'B' } else { b'Y' }),
        Node::Regex(_) => out.push(b'r'),
        Node::Doc(entries) => {
            out.push(b'{');
            for (name, value) in entries {
                let mut len = name.len();
                while len >= 0x80 {
                    out.push((len & 0x7F) as u8 | 0x80);
                    len >>= 7;
                }
                out.push(len as u8);
                out.extend_from_slice(name.as_bytes());
                shape(value, out);
            }
            out.push(b'}');
        }
        Node::Arr(items) => {
            out.push(b'[');
            for item in items {
                shape(item, out);
            }
            out.push(b']');
        }
    }
}

/// How a value is written: the inferred Connect schema, compiled.
enum Plan {
    /// a struct: each field's ``"name":`` (escaped) and plan
    Struct(Vec<(String, String, Plan)>),
    /// ``io.debezium.mongodb.regex``
    Regex,
    Array(Box<Plan>),
    Str,
    Int32,
    Int64,
    Double,
    Bool,
    Bytes,
    Timestamp,
}

fn compile(spec: &Bound<'_, PyAny>) -> PyResult<Plan> {
    let spec = spec.downcast::<PyTuple>()?;
    let kind: String = spec.get_item(0)?.extract()?;
    Ok(match kind.as_str() {
        "struct" => {
            let mut fields = Vec::new();
            for field in spec.get_item(1)?.downcast::<PyTuple>()?.iter() {
                let name: String = field.get_item(0)?.extract()?;
                let mut member = String::new();
                push_jackson_string(&mut member, &name);
                member.push(':');
                fields.push((name, member, compile(&field.get_item(1)?)?));
            }
            Plan::Struct(fields)
        }
        "array" => Plan::Array(Box::new(compile(&spec.get_item(1)?)?)),
        "regex" => Plan::Regex,
        "string" => Plan::Str,
        "int32" => Plan::Int32,
        "int64" => Plan::Int64,
        "double" => Plan::Double,
        "boolean" => Plan::Bool,
        "bytes" => Plan::Bytes,
        "timestamp" => Plan::Timestamp,
        other => return Err(PyValueError::new_err(format!("unknown plan kind {other}"))),
    })
}

/// Java's ``Double.toString``: in its plain range [1e-3, 1e7) the shortest digits in Ryu's decimal layout are
/// Java's text already; elsewhere :func:`java_double`.
fn push_double(out: &mut String, value: f64) {
    let magnitude = value.abs();
    if (1e-3..1e7).contains(&magnitude) {
        let mut buffer = ryu::Buffer::new();
        out.push_str(buffer.format_finite(value));
    } else {
        java_double(out, value, false); // Jackson writes Double.toString: no sign on the exponent
    }
}

fn push_base64(out: &mut String, data: &[u8]) {
    out.push('"');
    for chunk in data.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        out.push(BASE64[(n >> 18) as usize & 63] as char);
        out.push(BASE64[(n >> 12) as usize & 63] as char);
        out.push(if chunk.len() > 1 { BASE64[(n >> 6) as usize & 63] as char } else { '=' });
        out.push(if chunk.len() > 2 { BASE64[n as usize & 63] as char } else { '=' });
    }
    out.push('"');
}

/// The members of a struct (no braces): each field's value from ``get``, null when absent.
fn write_members<'n>(
    fields: &[(String, String, Plan)],
    get: impl Fn(&str) -> Option<&'n Node<'n>>,
    out: &mut String,
) -> R<()> {
    for (n, (name, member, plan)) in fields.iter().enumerate() {
        if n > 0 {
            out.push(',');
        }
        out.push_str(member);
        match get(name) {
            Some(value) => write(value, plan, out)?,
            None => out.push_str("null"),
        }
    }
    Ok(())
}

fn field_of<'n>(entries: &'n [(Cow<'n, str>, Node<'n>)], name: &str) -> Option<&'n Node<'n>> {
    entries.iter().find(|(k, _)| k == name).map(|(_, v)| v)
}

/// ``_<i>`` of a document-encoded array.
fn element_of<'n>(items: &'n [Node<'n>], name: &str) -> Option<&'n Node<'n>> {
    let index = name.strip_prefix('_')?;
    if index.is_empty() || (index.len() > 1 && index.starts_with('0')) {
        return None;
    }
    items.get(index.parse::<usize>().ok()?)
}

/// ``node`` as JsonConverter writes the Connect value ``SchemaInference.value`` makes of it under ``plan``.
fn write<'n>(node: &'n Node<'n>, plan: &Plan, out: &mut String) -> R<()> {
    match (plan, node) {
        (_, Node::Null) => out.push_str("null"),
        (Plan::Str, Node::Str(text)) => push_jackson_string(out, text),
        (Plan::Str, Node::Oid(hex)) => {
            out.push('"');
            out.extend(hex.chars().map(|c| c.to_ascii_lowercase()));
            out.push('"');
        }
        (Plan::Int32, Node::Int(v)) if i32::try_from(*v).is_ok() => push_int(out, *v),
        (Plan::Int64, Node::Int(v) | Node::Long(v)) => push_int(out, *v),
        (Plan::Double, Node::Double(v)) => push_double(out, *v),
        (Plan::Bool, Node::Bool(v)) => out.push_str(if *v { "true" } else { "false" }),
        (Plan::Bytes, Node::Bin(bin)) => push_base64(out, &bin.0),
        (Plan::Timestamp, Node::Date(millis)) if (MIN_MILLIS..=MAX_MILLIS).contains(millis) => push_int(out, *millis),
        (Plan::Timestamp, Node::Stamp(seconds)) => push_int(out, seconds * 1000),
        (Plan::Regex, Node::Regex(regex)) => {
            let (pattern, options) = regex.as_ref();
            out.push_str("{\"regex\":");
            push_jackson_string(out, pattern);
            out.push_str(",\"options\":");
            push_jackson_string(out, options);
            out.push('}');
        }
        (Plan::Struct(fields), Node::Doc(entries)) => {
            out.push('{');
            write_members(fields, |name| field_of(entries, name), out)?;
            out.push('}');
        }
        (Plan::Struct(fields), Node::Arr(items)) => {
            out.push('{');
            write_members(fields, |name| element_of(items, name), out)?;
            out.push('}');
        }
        (Plan::Array(item), Node::Arr(items)) => {
            out.push('[');
            for (n, value) in items.iter().enumerate() {
                if n > 0 {
                    out.push(',');
                }
                write(value, item, out)?;
            }
            out.push(']');
        }
        _ => return Err(()),
    }
    Ok(())
}

/// The compiled form of a document schema inferred by ExtractNewDocumentState (see the module documentation),
/// carrying what the transform keeps with it (``owner``: the schema and anything else).
#[pyclass(frozen, module = "connectors.mongodb._extjson")]
pub struct DocumentPlan {
    plan: Plan,
    #[pyo3(get)]
    owner: PyObject,
}

#[pymethods]
impl DocumentPlan {
    /// ``spec``: ``("struct", ((name, spec), ...))``, ``("array", spec)``, or ``(kind,)`` for ``regex``,
    /// ``string``, ``int32``, ``int64``, ``double``, ``boolean``, ``bytes``, ``timestamp``.
    #[new]
    fn new(spec: &Bound<'_, PyAny>, owner: PyObject) -> PyResult<Self> {
        let plan = compile(spec)?;
        if !matches!(plan, Plan::Struct(_)) {
            return Err(PyValueError::new_err("a document plan is a struct"));
        }
        Ok(DocumentPlan { plan, owner })
    }
}

type Unwrapped<'py> = (Bound<'py, PyBytes>, Option<Bound<'py, DocumentPlan>>, Option<Bound<'py, PyBytes>>);

/// The document of ``text`` (Extended JSON): ``(shape, plan, payload)`` when ``plans`` (shape -> DocumentPlan) has
/// its shape, ``(shape, None, None)`` when not; None when the text is not one this module handles. The payload is
/// the JsonConverter JSON of the struct, with ``tail`` (members already written: ``"name":value,...``) appended
/// after the document's fields.
#[pyfunction]
pub fn unwrap_document<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyString>,
    plans: &Bound<'py, PyDict>,
    tail: &str,
) -> PyResult<Option<Unwrapped<'py>>> {
    let text = text.to_str()?;
    let Ok(document) = Parser::new(text).document() else {
        return Ok(None);
    };
    let mut key = Vec::with_capacity(128);
    shape(&document, &mut key);
    let key = PyBytes::new(py, &key);
    let Some(found) = plans.get_item(&key)? else {
        return Ok(Some((key, None, None)));
    };
    let found = found.downcast_into::<DocumentPlan>()?;
    let Plan::Struct(fields) = &found.get().plan else {
        return Ok(None);
    };
    let Node::Doc(entries) = &document else {
        return Ok(None);
    };
    let mut out = String::with_capacity(text.len() + tail.len() + 16);
    out.push('{');
    if write_members(fields, |name| field_of(entries, name), &mut out).is_err() {
        return Ok(None);
    }
    if !tail.is_empty() {
        if !fields.is_empty() {
            out.push(',');
        }
        out.push_str(tail);
    }
    out.push('}');
    Ok(Some((key, Some(found), Some(PyBytes::new(py, out.as_bytes())))))
}

/// ``push_jackson_string``, exposed for tests.
#[pyfunction]
pub fn jackson_string(text: &str) -> String {
    let mut out = String::new();
    push_jackson_string(&mut out, text);
    out
}
