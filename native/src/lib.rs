//! BSON -> Extended JSON exactly as Debezium 3.x writes it (the MongoDB Java driver's JsonWriter), for the
//! MongoDB connector's hot path. The input is a raw BSON document (``RawBSONDocument.raw``, ``bson.encode``), so the
//! document is never decoded into Python objects. ``connectors/mongodb/extjson.py`` is the reference: for the
//! BSON pymongo decodes with the connector's codec options the output is the same text, byte for byte.

mod event;
mod numbers;
mod strings;
mod escape_table;
mod writer;
mod unwrap;
mod stream_rows;
#[path = "../jackson/src/text.rs"]
mod jackson_text;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyInt, PyString, PyTuple};

use writer::{Flavour, Writer};

fn run(raw: &[u8], flavour: Flavour, key: bool, plus_exponent: bool) -> PyResult<String> {
    let mut w = Writer::new(flavour, raw.len()).plus_exponent(plus_exponent);
    let result = if key { w.first_value(raw) } else { w.top_document(raw) };
    match result {
        Ok(()) => Ok(w.finish()),
        Err(msg) => Err(PyValueError::new_err(format!("invalid BSON: {msg}"))),
    }
}

/// The text of the document ``raw`` (``flavour``) appended to ``out`` as a JSON string literal, quoted and escaped
/// as Jackson writes it, in one pass (escaping the written text again cost a sixth of the whole).
fn push_quoted(out: &mut String, raw: &[u8], flavour: Flavour, plus_exponent: bool) -> PyResult<()> {
    out.reserve(raw.len() + raw.len() / 2 + 16);
    out.push('"');
    let mut w = Writer::new(flavour, 0).plus_exponent(plus_exponent).quoted(true)
        .appending_to(std::mem::take(out));
    match w.top_document(raw) {
        Ok(()) => {
            *out = w.finish();
            out.push('"');
            Ok(())
        }
        Err(msg) => Err(PyValueError::new_err(format!("invalid BSON: {msg}"))),
    }
}

fn quoted_text(py: Python<'_>, out: &mut String, raw: &[u8], flavour: Flavour, plus_exponent: bool) -> PyResult<()> {
    if raw.len() >= RELEASE_GIL_BYTES {
        py.allow_threads(|| push_quoted(out, raw, flavour, plus_exponent))
    } else {
        push_quoted(out, raw, flavour, plus_exponent)
    }
}

/// Documents at least this long are written with the GIL released. A shorter one is written in a few
/// microseconds, less than what releasing and taking back the GIL costs when another thread wants it (the fetcher,
/// the producer's acknowledgements): releasing it for every event made the task thread queue for the GIL twice
/// per event.
const RELEASE_GIL_BYTES: usize = 256 * 1024;

fn written(py: Python<'_>, raw: &[u8], flavour: Flavour, key: bool, plus_exponent: bool) -> PyResult<String> {
    if raw.len() >= RELEASE_GIL_BYTES {
        py.allow_threads(|| run(raw, flavour, key, plus_exponent))
    } else {
        run(raw, flavour, key, plus_exponent)
    }
}

/// Extended JSON v1 STRICT with Debezium's compact layout (``after``/``before``/``lsid``).
#[pyfunction]
#[pyo3(signature = (raw, plus_exponent=false))]
fn strict(py: Python<'_>, raw: &[u8], plus_exponent: bool) -> PyResult<String> {
    written(py, raw, Flavour::Strict, false, plus_exponent)
}

/// :func:`strict` as a JSON string literal, quoted and escaped as Jackson writes it (JsonConverter's bytes for
/// the ``after``/``before`` string of an envelope), without making the text a Python string first.
#[pyfunction]
#[pyo3(signature = (raw, plus_exponent=false))]
fn strict_quoted<'py>(py: Python<'py>, raw: &[u8], plus_exponent: bool) -> PyResult<Bound<'py, PyBytes>> {
    let mut out = String::new();
    quoted_text(py, &mut out, raw, Flavour::Strict, plus_exponent)?;
    Ok(PyBytes::new(py, out.as_bytes()))
}

/// A JsonConverter payload from its constant ``parts`` and the values of the ``holes`` between them
/// (``parts[0] holes[0] parts[1] ... parts[n]``): None as ``null``, an int as its decimal text, bytes as the
/// :func:`strict_quoted` text of the BSON document they hold, or, for a hole whose bit is set in ``relaxed``
/// (bit ``i`` for ``holes[i]``), its :func:`relaxed` text quoted the same way (``updatedFields``).
/// ``connectors/mongodb/envelope_writer.py`` cuts the parts out of the payload of a record's schema.
#[pyfunction]
#[pyo3(signature = (parts, holes, plus_exponent=false, relaxed=0))]
fn fill_payload<'py>(
    py: Python<'py>,
    parts: &Bound<'py, PyTuple>,
    holes: &Bound<'py, PyTuple>,
    plus_exponent: bool,
    relaxed: u64,
) -> PyResult<Bound<'py, PyBytes>> {
    if parts.len() != holes.len() + 1 {
        return Err(PyValueError::new_err("fill_payload: one more part than holes expected"));
    }
    let mut out = String::with_capacity(4096);
    for (index, part) in parts.iter().enumerate() {
        let part = part.downcast::<PyBytes>()?;
        let text = std::str::from_utf8(part.as_bytes())
            .map_err(|_| PyValueError::new_err("fill_payload: a part is not UTF-8"))?;
        out.push_str(text);
        if index == holes.len() {
            break;
        }
        let hole = holes.get_item(index)?;
        if hole.is_none() {
            out.push_str("null");
        } else if let Ok(number) = hole.downcast::<PyInt>() {
            jackson_text::push_int(&mut out, number.extract::<i64>()?);
        } else {
            let raw = hole.downcast::<PyBytes>()?;
            let flavour = if index < 64 && relaxed >> index & 1 == 1 { Flavour::RelaxedDefault } else { Flavour::Strict };
            quoted_text(py, &mut out, raw.as_bytes(), flavour, plus_exponent)?;
        }
    }
    Ok(PyBytes::new(py, out.as_bytes()))
}

/// Extended JSON v2 RELAXED with the driver's default layout (``updateDescription.updatedFields``).
#[pyfunction]
#[pyo3(signature = (raw, plus_exponent=false))]
fn relaxed(py: Python<'_>, raw: &[u8], plus_exponent: bool) -> PyResult<String> {
    written(py, raw, Flavour::RelaxedDefault, false, plus_exponent)
}

/// The first element's value as v2 RELAXED, compact layout: the document key ``id`` of ``{"_id": ...}``.
#[pyfunction]
#[pyo3(signature = (raw, plus_exponent=false))]
fn relaxed_key(raw: &[u8], plus_exponent: bool) -> PyResult<String> {
    run(raw, Flavour::RelaxedCompact, true, plus_exponent)
}

/// The RELAXED compact JSON of a document's ``_id`` (the key ``id`` of a snapshot record); None without ``_id``.
#[pyfunction]
#[pyo3(signature = (raw, plus_exponent=false))]
fn relaxed_id(raw: &[u8], plus_exponent: bool) -> PyResult<Option<String>> {
    let mut w = Writer::new(Flavour::RelaxedCompact, 64).plus_exponent(plus_exponent);
    match w.named_value(raw, "_id") {
        Ok(true) => Ok(Some(w.finish())),
        Ok(false) => Ok(None),
        Err(msg) => Err(PyValueError::new_err(format!("invalid BSON: {msg}"))),
    }
}

fn invalid(msg: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(format!("invalid BSON: {msg}"))
}

/// A change event's BSON split into (the event without its images, ``fullDocument``, ``fullDocumentBeforeChange``),
/// each image being the bytes of an embedded document or None.
#[pyfunction]
#[allow(clippy::type_complexity)]
fn split_images<'py>(
    py: Python<'py>,
    raw: &[u8],
) -> PyResult<(Bound<'py, PyBytes>, Option<Bound<'py, PyBytes>>, Option<Bound<'py, PyBytes>>)> {
    let split = writer::split_event(raw).map_err(invalid)?;
    Ok((PyBytes::new(py, &split.rest), split.full.map(|b| PyBytes::new(py, b)), split.before.map(|b| PyBytes::new(py, b))))
}

/// :func:`split_images` plus the bytes of the embedded ``_id`` (the resume token) and ``documentKey`` documents
/// (None when not documents), which stay in the rest too: (rest, fullDocument, fullDocumentBeforeChange, _id,
/// documentKey).
#[pyfunction]
#[allow(clippy::type_complexity)]
fn split_event<'py>(
    py: Python<'py>,
    raw: &[u8],
) -> PyResult<(
    Bound<'py, PyBytes>,
    Option<Bound<'py, PyBytes>>,
    Option<Bound<'py, PyBytes>>,
    Option<Bound<'py, PyBytes>>,
    Option<Bound<'py, PyBytes>>,
)> {
    let split = writer::split_event(raw).map_err(invalid)?;
    let bytes = |b: &[u8]| PyBytes::new(py, b);
    Ok((bytes(&split.rest), split.full.map(bytes), split.before.map(bytes), split.id.map(bytes), split.key.map(bytes)))
}

/// A change event read in one pass when it is a plain data event (:mod:`event`): (op, db, coll, resume token as
/// the offset's Base64, the record key's ``id`` text or None without a ``documentKey``, fullDocument,
/// fullDocumentBeforeChange, updatedFields, clusterTime seconds, clusterTime increment, wallTime milliseconds or 0,
/// ``raw`` itself); None for any other event (the decoding path then reads it, and words any error).
#[pyfunction]
#[pyo3(signature = (raw, plus_exponent=false))]
fn scan_event<'py>(py: Python<'py>, raw: &Bound<'py, PyBytes>, plus_exponent: bool) -> PyResult<Option<Bound<'py, PyTuple>>> {
    let Some(event) = event::scan(raw.as_bytes()) else {
        return Ok(None);
    };
    let key = match event.key {
        None => None,
        Some(key) => match event::key_id(key, plus_exponent) {
            Some(text) => Some(text),
            None => return Ok(None),
        },
    };
    let bytes = |b: &[u8]| PyBytes::new(py, b);
    let items: [PyObject; 12] = [
        PyString::intern(py, event.op).into_any().unbind(),
        PyString::new(py, event.db).into_any().unbind(),
        PyString::new(py, event.coll).into_any().unbind(),
        PyString::new(py, &event::base64(event.token)).into_any().unbind(),
        key.into_pyobject(py)?.into_any().unbind(),
        event.full.map(bytes).into_pyobject(py)?.into_any().unbind(),
        event.before.map(bytes).into_pyobject(py)?.into_any().unbind(),
        event.updated.map(bytes).into_pyobject(py)?.into_any().unbind(),
        event.sec.into_pyobject(py)?.into_any().unbind(),
        event.inc.into_pyobject(py)?.into_any().unbind(),
        event.wall_ms.into_pyobject(py)?.into_any().unbind(),
        raw.clone().into_any().unbind(),
    ];
    Ok(Some(PyTuple::new(py, items)?))
}

/// A ``find``/``getMore`` reply of a raw-batch cursor taken apart: (the reply with its batch array left empty,
/// the batch's documents each as its own bytes).
#[pyfunction]
fn cursor_reply<'py>(py: Python<'py>, raw: &[u8]) -> PyResult<(Bound<'py, PyBytes>, Vec<Bound<'py, PyBytes>>)> {
    let (rest, docs) = writer::cursor_reply(raw).map_err(invalid)?;
    Ok((PyBytes::new(py, &rest), docs.into_iter().map(|doc| PyBytes::new(py, doc)).collect()))
}

/// The bytes of the embedded document named ``name`` in ``raw``; None when there is none (or it is not a document).
#[pyfunction]
fn embedded<'py>(py: Python<'py>, raw: &[u8], name: &str) -> PyResult<Option<Bound<'py, PyBytes>>> {
    let found = writer::embedded(raw, name).map_err(|msg| PyValueError::new_err(format!("invalid BSON: {msg}")))?;
    Ok(found.map(|b| PyBytes::new(py, b)))
}

/// Java's ``Double.toString`` (JDK 19+), exposed for tests.
#[pyfunction]
#[pyo3(signature = (value, plus_exponent=false))]
fn java_double(value: f64, plus_exponent: bool) -> String {
    let mut out = String::new();
    numbers::java_double(&mut out, value, plus_exponent);
    out
}

#[pymodule]
fn _extjson(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(strict, m)?)?;
    m.add_function(wrap_pyfunction!(strict_quoted, m)?)?;
    m.add_function(wrap_pyfunction!(fill_payload, m)?)?;
    m.add_function(wrap_pyfunction!(relaxed, m)?)?;
    m.add_function(wrap_pyfunction!(relaxed_key, m)?)?;
    m.add_function(wrap_pyfunction!(split_images, m)?)?;
    m.add_function(wrap_pyfunction!(split_event, m)?)?;
    m.add_function(wrap_pyfunction!(scan_event, m)?)?;
    m.add_function(wrap_pyfunction!(relaxed_id, m)?)?;
    m.add_function(wrap_pyfunction!(embedded, m)?)?;
    m.add_function(wrap_pyfunction!(cursor_reply, m)?)?;
    m.add_function(wrap_pyfunction!(java_double, m)?)?;
    m.add_function(wrap_pyfunction!(unwrap::unwrap_document, m)?)?;
    m.add_function(wrap_pyfunction!(unwrap::jackson_string, m)?)?;
    m.add_class::<unwrap::DocumentPlan>()?;
    m.add_class::<stream_rows::StreamRows>()?;
    m.add_function(wrap_pyfunction!(stream_rows::plain_events, m)?)?;
    Ok(())
}
