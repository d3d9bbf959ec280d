//! A Connect schema compiled for JsonConverter: the value written straight from its ``Struct``s, lists, strings,
//! ints and booleans, without the intermediate tree. Built from a spec by ``converters/json_writer.py``
//! (``native_encoder``): every node carries the Python encoder of its schema, called for anything that is not
//! the plain case written here (another type, a Struct of an equal but not identical schema, floats, bytes, maps,
//! logical types): its tree is then written as :func:`dumps` writes it, and its errors are the Python errors.

use pyo3::exceptions::PyTypeError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyInt, PyList, PyString, PyTuple, PyType};

use crate::text::{push_int, push_jackson_string};
use crate::write;

/// A value's place: how it is written, and what a null there becomes.
struct Slot {
    node: Node,
    /// the JSON of a null here; None: a null is an error (the Python encoder raises it)
    null: Option<String>,
    /// the Python encoder of the place (nulls included)
    nullable: PyObject,
}

struct Field {
    name: Py<PyString>,
    /// ``"name":``
    member: String,
    slot: Slot,
}

enum Node {
    Struct { schema: PyObject, class: Py<PyType>, fields: Vec<Field>, python: PyObject },
    Array { items: Box<Slot>, python: PyObject },
    Str { python: PyObject },
    Bool { python: PyObject },
    Int { low: i64, high: i64, python: PyObject },
    Python { python: PyObject },
}

fn spec_error(what: &str) -> PyErr {
    PyTypeError::new_err(format!("bad encoder spec: {what}"))
}

fn compile_slot(spec: &Bound<'_, PyAny>) -> PyResult<Slot> {
    let spec = spec.downcast::<PyTuple>()?;
    let null = spec.get_item(1)?;
    let null = if null.is_none() {
        None
    } else {
        Some(std::str::from_utf8(null.downcast::<PyBytes>()?.as_bytes()).map_err(|_| spec_error("null"))?.to_owned())
    };
    Ok(Slot { node: compile_node(&spec.get_item(0)?)?, null, nullable: spec.get_item(2)?.unbind() })
}

fn compile_node(spec: &Bound<'_, PyAny>) -> PyResult<Node> {
    let spec = spec.downcast::<PyTuple>()?;
    let kind: String = spec.get_item(0)?.extract()?;
    let python = spec.get_item(spec.len() - 1)?.unbind();
    Ok(match kind.as_str() {
        "struct" => {
            let mut fields = Vec::new();
            for field in spec.get_item(3)?.downcast::<PyTuple>()?.iter() {
                let name = field.get_item(0)?.downcast_into::<PyString>()?;
                let member = std::str::from_utf8(field.get_item(1)?.downcast::<PyBytes>()?.as_bytes())
                    .map_err(|_| spec_error("member"))?
                    .to_owned();
                fields.push(Field { name: name.unbind(), member, slot: compile_slot(&field.get_item(2)?)? });
            }
            Node::Struct {
                schema: spec.get_item(1)?.unbind(),
                class: spec.get_item(2)?.downcast_into::<PyType>()?.unbind(),
                fields,
                python,
            }
        }
        "array" => Node::Array { items: Box::new(compile_slot(&spec.get_item(1)?)?), python },
        "string" => Node::Str { python },
        "boolean" => Node::Bool { python },
        "int" => Node::Int { low: spec.get_item(1)?.extract()?, high: spec.get_item(2)?.extract()?, python },
        "python" => Node::Python { python },
        other => return Err(spec_error(other)),
    })
}

/// ``value`` through the Python encoder ``python``, its tree written.
fn through(out: &mut String, python: &PyObject, value: &Bound<'_, PyAny>) -> PyResult<()> {
    let tree = python.bind(value.py()).call1((value,))?;
    write(out, &tree, 0)
}

fn write_slot(out: &mut String, slot: &Slot, value: &Bound<'_, PyAny>) -> PyResult<()> {
    if value.is_none() {
        return match &slot.null {
            Some(text) => {
                out.push_str(text);
                Ok(())
            }
            None => through(out, &slot.nullable, value),
        };
    }
    write_node(out, &slot.node, value)
}

fn write_node(out: &mut String, node: &Node, value: &Bound<'_, PyAny>) -> PyResult<()> {
    let py = value.py();
    match node {
        Node::Str { python } => match value.downcast_exact::<PyString>() {
            Ok(text) => push_jackson_string(out, text.to_str()?),
            Err(_) => through(out, python, value)?,
        },
        Node::Bool { python } => match value.downcast_exact::<PyBool>() {
            Ok(flag) => out.push_str(if flag.is_true() { "true" } else { "false" }),
            Err(_) => through(out, python, value)?,
        },
        Node::Int { low, high, python } => {
            let plain = match value.downcast_exact::<PyInt>() {
                Ok(int) => int.extract::<i64>().ok().filter(|v| (*low..=*high).contains(v)),
                Err(_) => None,
            };
            match plain {
                Some(v) => push_int(out, v),
                None => through(out, python, value)?,
            }
        }
        Node::Array { items, python } => {
            if let Ok(list) = value.downcast_exact::<PyList>() {
                out.push('[');
                for (n, item) in list.iter().enumerate() {
                    if n > 0 {
                        out.push(',');
                    }
                    write_slot(out, items, &item)?;
                }
                out.push(']');
            } else {
                through(out, python, value)?;
            }
        }
        Node::Struct { schema, class, fields, python } => {
            let plain = value.get_type().is(class.bind(py)) && value.getattr(intern!(py, "schema"))?.is(schema.bind(py));
            let values = if plain { value.getattr(intern!(py, "values"))?.downcast_into_exact::<PyDict>().ok() } else { None };
            match values {
                Some(values) => {
                    out.push('{');
                    for (n, field) in fields.iter().enumerate() {
                        if n > 0 {
                            out.push(',');
                        }
                        out.push_str(&field.member);
                        match values.get_item(field.name.bind(py))? {
                            Some(item) => write_slot(out, &field.slot, &item)?,
                            None => write_slot(out, &field.slot, &py.None().into_bound(py))?,
                        }
                    }
                    out.push('}');
                }
                None => through(out, python, value)?,
            }
        }
        Node::Python { python } => through(out, python, value)?,
    }
    Ok(())
}

/// A schema compiled for JsonConverter (see the module documentation).
#[pyclass(frozen, module = "converters._jackson")]
pub struct Encoder {
    slot: Slot,
}

#[pymethods]
impl Encoder {
    /// ``spec``: ``(node, null JSON bytes or None, nullable Python encoder)`` where a node is
    /// ``("struct", schema, Struct, ((name, b'"name":', slot), ...), encoder)``, ``("array", slot, encoder)``,
    /// ``("int", low, high, encoder)``, or ``("string" | "boolean" | "python", encoder)``.
    #[new]
    fn new(spec: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(Encoder { slot: compile_slot(spec)? })
    }

    /// The JSON of ``value``; with ``head`` (JSON text, e.g. ``{"schema":...,"payload":``), ``head`` + it + ``}``.
    #[pyo3(signature = (value, head=None))]
    fn encode<'py>(&self, value: &Bound<'py, PyAny>, head: Option<&Bound<'py, PyBytes>>) -> PyResult<Bound<'py, PyBytes>> {
        let mut out = String::with_capacity(4096);
        if let Some(head) = head {
            out.push_str(std::str::from_utf8(head.as_bytes()).map_err(|_| spec_error("head is not UTF-8"))?);
        }
        write_slot(&mut out, &self.slot, value)?;
        if head.is_some() {
            out.push('}');
        }
        Ok(PyBytes::new(value.py(), out.as_bytes()))
    }
}
