//! ``converters._jackson``: JsonConverter's output text, as Jackson writes it, from the JSON-ready tree its encoders
//! build (``converters/json_writer.py``): dicts with string keys, lists and tuples, strings, ints, booleans, None,
//! and ``bytes`` holding JSON text already written (numbers formatted as Java does, pre-serialized members). It
//! replaces orjson plus the escape fix-ups: one pass, Jackson's escapes written directly. What it does not take
//! (a string with a lone surrogate, an int beyond 64 bits, another type) raises ValueError, TypeError or
//! OverflowError, and the caller uses the pure-Python reference writer (``dumps_reference``).

mod encoder;
mod text;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyInt, PyList, PyString, PyTuple};

use text::{push_int, push_jackson_string};

const MAX_DEPTH: u32 = 500;

fn write_string(out: &mut String, text: &Bound<'_, PyString>) -> PyResult<()> {
    push_jackson_string(out, text.to_str()?);
    Ok(())
}

fn write_items<'py>(out: &mut String, items: impl Iterator<Item = Bound<'py, PyAny>>, depth: u32) -> PyResult<()> {
    out.push('[');
    for (n, item) in items.enumerate() {
        if n > 0 {
            out.push(',');
        }
        write(out, &item, depth + 1)?;
    }
    out.push(']');
    Ok(())
}

fn write_dict(out: &mut String, dict: &Bound<'_, PyDict>, depth: u32) -> PyResult<()> {
    out.push('{');
    for (n, (key, value)) in dict.iter().enumerate() {
        if n > 0 {
            out.push(',');
        }
        let key = key.downcast_into::<PyString>().map_err(|_| PyTypeError::new_err("a JSON object key is a str"))?;
        write_string(out, &key)?;
        out.push(':');
        write(out, &value, depth + 1)?;
    }
    out.push('}');
    Ok(())
}

pub(crate) fn write(out: &mut String, obj: &Bound<'_, PyAny>, depth: u32) -> PyResult<()> {
    if depth > MAX_DEPTH {
        return Err(PyValueError::new_err("nesting too deep"));
    }
    if let Ok(text) = obj.downcast_exact::<PyString>() {
        return write_string(out, text);
    }
    if obj.is_none() {
        out.push_str("null");
        return Ok(());
    }
    if let Ok(dict) = obj.downcast_exact::<PyDict>() {
        return write_dict(out, dict, depth);
    }
    if let Ok(list) = obj.downcast_exact::<PyList>() {
        return write_items(out, list.iter(), depth);
    }
    if let Ok(flag) = obj.downcast::<PyBool>() {
        out.push_str(if flag.is_true() { "true" } else { "false" });
        return Ok(());
    }
    if obj.is_instance_of::<PyInt>() {
        push_int(out, obj.extract::<i64>()?);
        return Ok(());
    }
    if let Ok(raw) = obj.downcast_exact::<PyBytes>() {
        let text = std::str::from_utf8(raw.as_bytes()).map_err(|_| PyValueError::new_err("raw JSON is UTF-8"))?;
        out.push_str(text);
        return Ok(());
    }
    if let Ok(text) = obj.downcast::<PyString>() {
        return write_string(out, text);
    }
    if let Ok(dict) = obj.downcast::<PyDict>() {
        return write_dict(out, dict, depth);
    }
    if let Ok(list) = obj.downcast::<PyList>() {
        return write_items(out, list.iter(), depth);
    }
    if let Ok(tuple) = obj.downcast::<PyTuple>() {
        return write_items(out, tuple.iter(), depth);
    }
    Err(PyTypeError::new_err(format!("Cannot write {} as JSON", obj.get_type().name()?)))
}

/// The JSON text of ``tree`` (see the module documentation), compact, as Jackson writes it.
#[pyfunction]
fn dumps<'py>(py: Python<'py>, tree: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    let mut out = String::with_capacity(4096);
    write(&mut out, tree, 0)?;
    Ok(PyBytes::new(py, out.as_bytes()))
}

/// A JSON object from its members' names already written (``b'"name":'``) and their values (written as
/// :func:`dumps` writes them), in order.
#[pyfunction]
fn members<'py>(py: Python<'py>, names: &Bound<'py, PyTuple>, values: &Bound<'py, PyTuple>) -> PyResult<Bound<'py, PyBytes>> {
    if names.len() != values.len() {
        return Err(PyValueError::new_err("as many names as values"));
    }
    let mut out = String::with_capacity(4096);
    out.push('{');
    for (n, (name, value)) in names.iter().zip(values.iter()).enumerate() {
        if n > 0 {
            out.push(',');
        }
        let name = name.downcast_into::<PyBytes>().map_err(|_| PyTypeError::new_err("a member name is bytes"))?;
        out.push_str(std::str::from_utf8(name.as_bytes()).map_err(|_| PyValueError::new_err("a name is UTF-8"))?);
        write(&mut out, &value, 1)?;
    }
    out.push('}');
    Ok(PyBytes::new(py, out.as_bytes()))
}

#[pymodule]
fn _jackson(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(dumps, m)?)?;
    m.add_function(wrap_pyfunction!(members, m)?)?;
    m.add_class::<encoder::Encoder>()?;
    Ok(())
}
