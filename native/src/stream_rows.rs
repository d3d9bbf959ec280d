//! A run of a change stream's plain data events turned into prepared rows in one call (``StreamRows.run``): per
//! event the one-pass read of :mod:`event`, the record key's text, the envelope's payload filled into the parts
//! of its collection's plan, the offset, and the row (``connect.api.records.PreparedRow``), with no Python code
//! per event. What a plan says is decided in Python, once per collection, operation and update shape
//! (``StreamCapture``: filters, the signal collection; ``ChangeEventConverter.stream_plan``: topic, schemas,
//! parts); an event that needs more than a row stops the run where it is, for the Python path.

use std::collections::HashMap;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};

use crate::event::{self, Scanned};
use crate::jackson_text::{push_int, push_jackson_string};
use crate::writer::Flavour;

/// ``envelope_writer.MAX_TS_MS``: ``source.ts_ns`` (ts_ms * 10^6) must fit a long.
const MAX_TS_MS: i64 = i64::MAX / 1_000_000;
/// Plans kept before they are all dropped (``envelope_writer``'s templates have the same bound).
const MAX_PLANS: usize = 4096;

/// The run ended: every event taken, or the next item is not a plain data event's bytes.
pub const DONE: u8 = 0;
/// The next event's collection, operation and update shape has no plan yet.
pub const NO_PLAN: u8 = 1;
/// The next event takes the Python path (its plan says so, or a value is out of the written range).
pub const PYTHON: u8 = 2;

/// What the events of one collection, operation and update shape become.
enum Plan {
    /// filtered out (counted)
    Skip,
    /// each event takes the Python path
    Python,
    /// a row: the payload's constant parts, between which the holes are written, and the row's topic and schemas
    Row { parts: Vec<String>, topic: PyObject, key_schema: PyObject, value_schema: PyObject },
}

/// The plans of one stream; ``run`` turns runs of its events into rows.
#[pyclass(module = "connectors.mongodb._extjson")]
pub struct StreamRows {
    plus_exponent: bool,
    plans: HashMap<String, Plan>,
    lookup: String,
}

fn plan_key(out: &mut String, db: &str, coll: &str, op: &str, update: bool) {
    out.clear();
    out.push_str(op);
    out.push(if update { '+' } else { '-' });
    out.push_str(db);
    out.push('\0');
    out.push_str(coll);
}

/// How a run of ``StreamRows.run`` ended and what it took: (index of the next item, status, events filtered
/// out, (sec, ord, resume token) of the last event taken or None).
type RunResult = (usize, u8, usize, Option<(u32, u32, String)>);

#[pymethods]
impl StreamRows {
    #[new]
    #[pyo3(signature = (plus_exponent=false))]
    fn new(plus_exponent: bool) -> Self {
        StreamRows { plus_exponent, plans: HashMap::new(), lookup: String::new() }
    }

    /// The plan of the events of ``db.coll`` with ``op`` (``c``, ``u``, ``d``) and, for ``update``, an
    /// ``updateDescription``: ``kind`` 0 filtered out, 1 the Python path, 2 rows (``parts``: the payload's
    /// constant parts around its 8 holes, 9 with ``update``, as ``envelope_writer.StreamPayloads`` cuts them).
    #[pyo3(signature = (db, coll, op, update, kind, parts=None, topic=None, key_schema=None, value_schema=None))]
    #[allow(clippy::too_many_arguments)]
    fn plan(&mut self, py: Python<'_>, db: &str, coll: &str, op: &str, update: bool, kind: u8,
            parts: Option<Vec<Vec<u8>>>, topic: Option<PyObject>, key_schema: Option<PyObject>,
            value_schema: Option<PyObject>) -> PyResult<()> {
        let plan = match kind {
            0 => Plan::Skip,
            1 => Plan::Python,
            2 => {
                let parts = parts.ok_or_else(|| PyValueError::new_err("StreamRows.plan: rows need parts"))?;
                if parts.len() != if update { 10 } else { 9 } {
                    return Err(PyValueError::new_err("StreamRows.plan: parts do not fit the stream's holes"));
                }
                let parts = parts.into_iter().map(String::from_utf8).collect::<Result<Vec<_>, _>>()
                    .map_err(|_| PyValueError::new_err("StreamRows.plan: a part is not UTF-8"))?;
                let none = || py.None();
                Plan::Row { parts, topic: topic.unwrap_or_else(none), key_schema: key_schema.unwrap_or_else(none),
                            value_schema: value_schema.unwrap_or_else(none) }
            }
            _ => return Err(PyValueError::new_err("StreamRows.plan: kind is 0, 1 or 2")),
        };
        if self.plans.len() >= MAX_PLANS {
            self.plans.clear();
        }
        let mut key = String::new();
        plan_key(&mut key, db, coll, op, update);
        self.plans.insert(key, plan);
        Ok(())
    }

    /// Rows for the events of ``events`` from ``start`` on, appended to ``rows``, as long as they are plain data
    /// events' bytes with a plan; each taken event's op and ``source.ts_ms`` appended to ``ops`` and ``stamps``
    /// (and its ``db.coll`` to ``namespaces`` unless None). ``context``: (partition, headers, the rows' record
    /// function, the decoding function, tombstones after deletes, the emit time in ms); a row's last item is
    /// (the event's bytes, the decoding function, the emit time).
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (events, start, rows, ops, stamps, namespaces, context))]
    fn run<'py>(&mut self, py: Python<'py>, events: &Bound<'py, PyList>, start: usize, rows: &Bound<'py, PyList>,
                ops: &Bound<'py, PyList>, stamps: &Bound<'py, PyList>, namespaces: Option<&Bound<'py, PyList>>,
                context: &Bound<'py, PyTuple>) -> PyResult<RunResult> {
        let partition = context.get_item(0)?;
        let headers = context.get_item(1)?;
        let record = context.get_item(2)?;
        let decode = context.get_item(3)?;
        let tombstones: bool = context.get_item(4)?.extract()?;
        let now: i64 = context.get_item(5)?.extract()?;
        let names = [PyString::intern(py, "sec"), PyString::intern(py, "ord"), PyString::intern(py, "resume_token")];
        let mut filtered = 0usize;
        let mut last: Option<usize> = None;
        let mut index = start;
        let result = loop {
            if index >= events.len() {
                break DONE;
            }
            let item = events.get_item(index)?;
            let Ok(raw) = item.downcast::<PyBytes>() else { break DONE };
            let Some(scanned) = event::scan(raw.as_bytes()) else { break PYTHON };
            let ts_ms = if scanned.wall_ms != 0 { scanned.wall_ms } else { i64::from(scanned.sec) * 1000 };
            if scanned.inc >= 1 << 31 || !(0..MAX_TS_MS).contains(&ts_ms) {
                break PYTHON;
            }
            plan_key(&mut self.lookup, scanned.db, scanned.coll, scanned.op, scanned.updated.is_some());
            let Some(plan) = self.plans.get(self.lookup.as_str()) else { break NO_PLAN };
            let Plan::Row { parts, topic, key_schema, value_schema } = plan else {
                if let Plan::Skip = plan {
                    filtered += 1;
                    last = Some(index);
                    index += 1;
                    continue;
                }
                break PYTHON;
            };
            let Some(key) = record_key(&scanned, self.plus_exponent) else { break PYTHON };
            let Some(payload) = payload(py, parts, &scanned, ts_ms, now, self.plus_exponent) else { break PYTHON };
            let key = key.map(|text| PyBytes::new(py, text.as_bytes()).into_any());
            let offset = PyDict::new(py);
            offset.set_item(&names[0], scanned.sec)?;
            offset.set_item(&names[1], scanned.inc)?;
            offset.set_item(&names[2], event::base64(scanned.token))?;
            let made = PyTuple::new(py, [raw.as_any(), &decode, &now.into_pyobject(py)?.into_any()])?;
            let op = PyString::intern(py, scanned.op);
            let none = py.None().into_bound(py);
            let key = key.unwrap_or_else(|| none.clone());
            let cells = [topic.bind(py).clone(), key_schema.bind(py).clone(), key.clone(), value_schema.bind(py).clone(),
                         PyBytes::new(py, payload.as_bytes()).into_any(), partition.clone(), offset.into_any(),
                         headers.clone(), record.clone(), made.into_any()];
            rows.append(PyTuple::new(py, &cells)?)?;
            if scanned.op == "d" && tombstones {
                let cells = [topic.bind(py).clone(), key_schema.bind(py).clone(), key, none.clone(), none,
                             cells[5].clone(), cells[6].clone(), cells[7].clone(), cells[8].clone(), cells[9].clone()];
                rows.append(PyTuple::new(py, &cells)?)?;
            }
            ops.append(op)?;
            stamps.append(ts_ms)?;
            if let Some(namespaces) = namespaces {
                namespaces.append(format!("{}.{}", scanned.db, scanned.coll))?;
            }
            last = Some(index);
            index += 1;
        };
        let last = match last {
            None => None,
            Some(at) => {
                let item = events.get_item(at)?;
                let scanned = event::scan(item.downcast::<PyBytes>()?.as_bytes())
                    .ok_or_else(|| PyValueError::new_err("StreamRows.run: an event changed"))?;
                Some((scanned.sec, scanned.inc, event::base64(scanned.token)))
            }
        };
        Ok((index, result, filtered, last))
    }
}

/// The record key's payload, ``{"id":<the documentKey's _id in relaxed Extended JSON, as a JSON string>}``;
/// Some(None) without a ``documentKey``, None where the Python path writes it.
fn record_key(scanned: &Scanned<'_>, plus_exponent: bool) -> Option<Option<String>> {
    let Some(key) = scanned.key else { return Some(None) };
    let text = event::key_id(key, plus_exponent)?;
    let mut out = String::with_capacity(text.len() + 10);
    out.push_str("{\"id\":");
    push_jackson_string(&mut out, &text);
    out.push('}');
    Some(Some(out))
}

/// The payload: ``parts`` around before, after, (updatedFields,) ts_ms, ts_us, ts_ns, ord, wallTime, the emit time
/// (``envelope_writer.StreamPayloads.write_raw``'s holes); None where a document cannot be written.
fn payload(py: Python<'_>, parts: &[String], scanned: &Scanned<'_>, ts_ms: i64, now: i64,
           plus_exponent: bool) -> Option<String> {
    let before = if scanned.op == "c" { None } else { scanned.before };
    let after = if scanned.op == "d" { None } else { scanned.full };
    let size = parts.iter().map(String::len).sum::<usize>() + before.map_or(0, <[u8]>::len) * 3 / 2
        + after.map_or(0, <[u8]>::len) * 3 / 2 + scanned.updated.map_or(0, <[u8]>::len) * 3 / 2 + 128;
    let mut out = String::with_capacity(size);
    let mut parts = parts.iter();
    let mut part = |out: &mut String| out.push_str(parts.next().map_or("", String::as_str));
    for image in [before, after] {
        part(&mut out);
        match image {
            None => out.push_str("null"),
            Some(raw) => crate::quoted_text(py, &mut out, raw, Flavour::Strict, plus_exponent).ok()?,
        }
    }
    if let Some(updated) = scanned.updated {
        part(&mut out);
        crate::quoted_text(py, &mut out, updated, Flavour::RelaxedDefault, plus_exponent).ok()?;
    }
    for number in [ts_ms, ts_ms * 1000, ts_ms * 1_000_000, i64::from(scanned.inc)] {
        part(&mut out);
        push_int(&mut out, number);
    }
    part(&mut out);
    if scanned.wall_ms != 0 {
        push_int(&mut out, scanned.wall_ms);
    } else {
        out.push_str("null");
    }
    part(&mut out);
    push_int(&mut out, now);
    part(&mut out);
    Some(out)
}

/// The bytes of the events of ``events`` from ``start`` on that ``StreamRows.run`` can read (each item's
/// ``attribute``, a RawBSONDocument's bytes, holding a plain data event), up to the first that is not one.
#[pyfunction]
pub fn plain_events<'py>(events: &Bound<'py, PyList>, start: usize, attribute: &Bound<'py, PyString>)
                         -> PyResult<Vec<Bound<'py, PyBytes>>> {
    let mut found = Vec::new();
    for index in start..events.len() {
        let Ok(raw) = events.get_item(index)?.getattr(attribute) else { break };
        let Ok(raw) = raw.downcast_into::<PyBytes>() else { break };
        if event::scan(raw.as_bytes()).is_none() {
            break;
        }
        found.push(raw);
    }
    Ok(found)
}
