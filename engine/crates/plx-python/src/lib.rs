//! `parallax._native`: the engine inside the Python package — an experiment's tables computed by plx-analysis and plx-export, handed to Python as Arrow record batches (no copy, no subprocess).
//!
//! Each function reads the experiment directory it is given and returns a dict of
//! [`RecordBatch`]es (objects with `__arrow_c_array__`: `pyarrow.record_batch(b)` takes their
//! columns in place) with the warnings the engine printed as `plx: warning:` lines. The numbers
//! are those of the commands: `trace` the Parquet export's tables (`plx export --format
//! parquet`), `profiles` `plx report --callpath`, `sync` `plx report --sync`, `waits` `plx waits
//! --causes`, `counters` `plx report --counters`' thread totals. The GIL is released while
//! the engine works.

mod arrow;
mod tables;

use std::ffi::CString;
use std::path::PathBuf;

use pyo3::create_exception;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict};

use arrow::{drop_array, drop_schema, Batch};

create_exception!(
    _native,
    PlxError,
    PyRuntimeError,
    "The engine could not read the experiment: the message plx would print."
);

/// A record batch for one reader: `__arrow_c_array__` moves its columns out (a second call is
/// an error).
#[pyclass(module = "parallax._native")]
pub struct RecordBatch {
    batch: Option<Batch>,
    rows: usize,
}

impl RecordBatch {
    fn new(batch: Batch) -> RecordBatch {
        RecordBatch {
            rows: batch.rows(),
            batch: Some(batch),
        }
    }
}

#[pymethods]
impl RecordBatch {
    /// Rows.
    #[getter]
    fn num_rows(&self) -> usize {
        self.rows
    }

    /// The Arrow PyCapsule interface: (schema capsule, array capsule) of a struct array whose
    /// fields are the columns. The schema asked for is ignored (the batch has one).
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_array__<'py>(
        &mut self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<(Bound<'py, PyCapsule>, Bound<'py, PyCapsule>)> {
        let _ = requested_schema;
        let batch = self
            .batch
            .take()
            .ok_or_else(|| PyRuntimeError::new_err("this record batch was already read"))?;
        let (schema, array) = batch.export();
        let schema = PyCapsule::new_with_destructor(
            py,
            schema,
            Some(CString::new("arrow_schema").expect("name")),
            |mut s, _| drop_schema(&mut s),
        )?;
        let array = PyCapsule::new_with_destructor(
            py,
            array,
            Some(CString::new("arrow_array").expect("name")),
            |mut a, _| drop_array(&mut a),
        )?;
        Ok((schema, array))
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

/// Runs `f` on `path` with the GIL released; its error becomes a `PlxError`.
fn run<'py>(
    py: Python<'py>,
    path: PathBuf,
    f: fn(&std::path::Path) -> Result<Tables, String>,
) -> PyResult<Bound<'py, PyDict>> {
    let t = py.detach(|| f(&path)).map_err(PlxError::new_err)?;
    to_dict(py, t)
}

/// The merged trace: events, intervals, messages, locations, regions, comms (one merge).
#[pyfunction]
fn trace(py: Python<'_>, path: PathBuf) -> PyResult<Bound<'_, PyDict>> {
    run(py, path, tables::trace)
}

/// The callpath profiles of every thread (`plx report --callpath`) and their total, with the
/// callpaths table they index.
#[pyfunction]
fn profiles(py: Python<'_>, path: PathBuf) -> PyResult<Bound<'_, PyDict>> {
    run(py, path, tables::profiles)
}

/// The synchronization objects (`plx report --sync`): per thread, then in total.
#[pyfunction]
fn sync(py: Python<'_>, path: PathBuf) -> PyResult<Bound<'_, PyDict>> {
    run(py, path, tables::sync)
}

/// The wait states and their causes (`plx waits --causes`).
#[pyfunction]
fn waits(py: Python<'_>, path: PathBuf) -> PyResult<Bound<'_, PyDict>> {
    run(py, path, tables::waits)
}

/// The whole-thread counter totals (`plx report --counters`' `(thread)` rows), long form.
#[pyfunction]
fn counters(py: Python<'_>, path: PathBuf) -> PyResult<Bound<'_, PyDict>> {
    run(py, path, tables::counters)
}

/// The process images (`plx info`'s processes): program, arguments, host, start, MPI world.
#[pyfunction]
fn processes(py: Python<'_>, path: PathBuf) -> PyResult<Bound<'_, PyDict>> {
    run(py, path, tables::processes)
}

/// The call-stack samples, a row each, timed where the runtime stamped them (a trace).
#[pyfunction]
fn samples(py: Python<'_>, path: PathBuf) -> PyResult<Bound<'_, PyDict>> {
    run(py, path, tables::samples)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("PlxError", m.py().get_type::<PlxError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<RecordBatch>()?;
    m.add_function(wrap_pyfunction!(trace, m)?)?;
    m.add_function(wrap_pyfunction!(profiles, m)?)?;
    m.add_function(wrap_pyfunction!(sync, m)?)?;
    m.add_function(wrap_pyfunction!(waits, m)?)?;
    m.add_function(wrap_pyfunction!(counters, m)?)?;
    m.add_function(wrap_pyfunction!(processes, m)?)?;
    m.add_function(wrap_pyfunction!(samples, m)?)?;
    Ok(())
}
