//! `parallax._native`: the engine inside the Python package — an experiment's tables computed by plx-analysis and plx-export, handed to Python as Arrow record batches (no copy, no subprocess).
//!
//! Each function reads the experiment directory it is given and returns a dict of
//! [`RecordBatch`]es (objects with `__arrow_c_array__`: `pyarrow.record_batch(b)` reads their
//! columns in place, as often as asked) with the warnings the engine printed as `plx: warning:`
//! lines. The numbers are those of the commands: `trace` the Parquet export's tables (`plx
//! export --format parquet`), `profiles` `plx report --callpath`, `sync` `plx report --sync`,
//! `waits` `plx waits --causes`, `counters` `plx report --counters`' thread totals. The GIL is
//! released while the engine works.

mod arrow;
mod tables;

use std::ffi::{CStr, CString};
use std::path::{Path, PathBuf};

use pyo3::create_exception;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyCFunction, PyCapsule, PyDict, PyTuple};

use arrow::{drop_released, drop_stream, Batch, Shared};

create_exception!(
    _native,
    PlxError,
    PyRuntimeError,
    "The engine could not read the experiment: the message plx would print."
);

/// A record batch: its columns shared by every reader (each `__arrow_c_array__` or
/// `__arrow_c_stream__` call hands out the same memory, freed when the batch and the last
/// reader's arrays are gone).
#[pyclass(module = "parallax._native", frozen)]
pub struct RecordBatch {
    batch: Shared,
}

impl RecordBatch {
    fn new(batch: Batch) -> RecordBatch {
        RecordBatch {
            batch: batch.share(),
        }
    }
}

#[pymethods]
impl RecordBatch {
    /// Rows.
    #[getter]
    fn num_rows(&self) -> usize {
        self.batch.rows()
    }

    /// The Arrow PyCapsule interface: (schema capsule, array capsule) of a struct array whose
    /// fields are the columns. The schema asked for is ignored (the batch has one).
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<(Bound<'py, PyCapsule>, Bound<'py, PyCapsule>)> {
        let _ = requested_schema;
        let (schema, array) = self.batch.export();
        let schema = PyCapsule::new_with_destructor(
            py,
            schema,
            Some(CString::from(c"arrow_schema")),
            |mut s, _| drop_released(&mut s),
        )?;
        let array = PyCapsule::new_with_destructor(
            py,
            array,
            Some(CString::from(c"arrow_array")),
            |mut a, _| drop_released(&mut a),
        )?;
        Ok((schema, array))
    }

    /// The Arrow PyCapsule interface for streams: a capsule of an `ArrowArrayStream` of this
    /// one batch (`pyarrow.table(b)`, `polars.from_arrow(b)`, DuckDB read it, each as often as
    /// it asks). The schema asked for is ignored.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let stream = self.batch.stream();
        PyCapsule::new_with_destructor(
            py,
            stream,
            Some(CString::from(c"arrow_array_stream")),
            |mut s, _| drop_stream(&mut s),
        )
    }
}

/// What a function returns before it becomes a dict: batches by name, the warnings, and
/// numbers (the time origin).
#[derive(Default)]
pub struct Tables {
    batches: Vec<(&'static str, Batch)>,
    warnings: Vec<String>,
    numbers: Vec<(&'static str, i64)>,
}

fn to_dict(py: Python<'_>, t: Tables) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    for (name, b) in t.batches {
        d.set_item(name, Py::new(py, RecordBatch::new(b))?)?;
    }
    d.set_item("warnings", t.warnings)?;
    for (name, n) in t.numbers {
        d.set_item(name, n)?;
    }
    Ok(d)
}

/// An engine pass: the tables it computes from an experiment directory.
type Pass = fn(&Path) -> Result<Tables, String>;

/// The module's functions, `name(path)` each: its pass, run with the GIL released (an error
/// becomes a `PlxError`), its tables as a dict.
const PASSES: [(&CStr, &CStr, Pass); 8] = [
    (
        c"trace",
        c"trace(path)\n--\n\nThe merged trace's events, messages, locations, regions and comms (one merge; no intervals).",
        tables::trace,
    ),
    (
        c"intervals",
        c"intervals(path)\n--\n\nThe matched enter/exit intervals of the merged trace (one merge; no events).",
        tables::intervals,
    ),
    (
        c"profiles",
        c"profiles(path)\n--\n\nThe callpath profiles of every thread (plx report --callpath) and their total, with the callpaths table they index.",
        tables::profiles,
    ),
    (
        c"sync",
        c"sync(path)\n--\n\nThe synchronization objects (plx report --sync): per thread, then in total.",
        tables::sync,
    ),
    (
        c"waits",
        c"waits(path)\n--\n\nThe wait states and their causes (plx waits --causes).",
        tables::waits,
    ),
    (
        c"counters",
        c"counters(path)\n--\n\nThe counter totals (plx report --counters), long form.",
        tables::counters,
    ),
    (
        c"processes",
        c"processes(path)\n--\n\nThe process images (plx info's processes): program, arguments, host, start, MPI world.",
        tables::processes,
    ),
    (
        c"samples",
        c"samples(path)\n--\n\nThe call-stack samples, a row each, timed where the runtime stamped them (a trace).",
        tables::samples,
    ),
];

/// `pass(path)` as a Python function.
fn function<'py>(
    py: Python<'py>,
    (name, doc, pass): (&'static CStr, &'static CStr, Pass),
) -> PyResult<Bound<'py, PyCFunction>> {
    PyCFunction::new_closure(
        py,
        Some(name),
        Some(doc),
        move |args: &Bound<'_, PyTuple>,
              kwargs: Option<&Bound<'_, PyDict>>|
              -> PyResult<Py<PyDict>> {
            let py = args.py();
            let path: PathBuf = match (args.len(), kwargs) {
                (1, None) => args.get_item(0)?.extract()?,
                (0, Some(k)) if k.len() == 1 => k
                    .get_item("path")?
                    .ok_or_else(|| PyRuntimeError::new_err("path: missing"))?
                    .extract()?,
                _ => {
                    return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                        "{}() takes one argument, the experiment directory",
                        name.to_string_lossy()
                    )))
                }
            };
            let t = py.detach(|| pass(&path)).map_err(PlxError::new_err)?;
            Ok(to_dict(py, t)?.unbind())
        },
    )
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("PlxError", m.py().get_type::<PlxError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<RecordBatch>()?;
    for pass in PASSES {
        m.add(pass.0.to_str().expect("ASCII"), function(m.py(), pass)?)?;
    }
    Ok(())
}
