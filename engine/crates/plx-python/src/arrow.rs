//! Record batches handed to Arrow readers through the Arrow C data interface (the two C structs of arrow.apache.org/docs/format/CDataInterface.html), without copying a column.
//!
//! A [`Batch`] owns its columns' vectors; [`Batch::export`] moves them into an `ArrowArray`
//! whose `release` callback frees them, so that pyarrow (or Polars) reads the engine's memory in
//! place and frees it when its last reference goes. Only what the tables use is here: fixed
//! width numbers, booleans, UTF-8 strings, dictionaries of strings, and the struct of a batch.

use std::collections::HashMap;
use std::ffi::{c_char, c_void, CString};
use std::ptr;

use plx_export::columns::Col;

/// `struct ArrowSchema` of the C data interface.
#[repr(C)]
pub struct FfiSchema {
    format: *const c_char,
    name: *const c_char,
    metadata: *const c_char,
    flags: i64,
    n_children: i64,
    children: *mut *mut FfiSchema,
    dictionary: *mut FfiSchema,
    release: Option<unsafe extern "C" fn(*mut FfiSchema)>,
    private_data: *mut c_void,
}

/// `struct ArrowArray` of the C data interface.
#[repr(C)]
pub struct FfiArray {
    length: i64,
    null_count: i64,
    offset: i64,
    n_buffers: i64,
    n_children: i64,
    buffers: *mut *const c_void,
    children: *mut *mut FfiArray,
    dictionary: *mut FfiArray,
    release: Option<unsafe extern "C" fn(*mut FfiArray)>,
    private_data: *mut c_void,
}

// SAFETY: the structs own what they point to (their private data) and are moved, never shared.
unsafe impl Send for FfiSchema {}
unsafe impl Send for FfiArray {}

/// `ARROW_FLAG_NULLABLE`.
const NULLABLE: i64 = 2;

/// A buffer of an array: a vector kept alive until the array is released.
enum Buffer {
    U8(Vec<u8>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    F64(Vec<f64>),
}

impl Buffer {
    fn ptr(&self) -> *const c_void {
        match self {
            Buffer::U8(v) => v.as_ptr().cast(),
            Buffer::I32(v) => v.as_ptr().cast(),
            Buffer::I64(v) => v.as_ptr().cast(),
            Buffer::F64(v) => v.as_ptr().cast(),
        }
    }
}

/// An array before export: its type (format string), length, buffers, children, dictionary.
pub struct Array {
    format: &'static str,
    len: usize,
    nulls: usize,
    buffers: Vec<Option<Buffer>>,
    children: Vec<(String, Array)>,
    dictionary: Option<Box<Array>>,
}

/// A numeric type of a column and its Arrow format character.
pub trait Fixed: Sized + Copy + Default {
    /// `i`, `l`, `g` (int32, int64, float64).
    const FORMAT: &'static str;
    /// The vector as a buffer.
    #[doc(hidden)]
    fn buffer(v: Vec<Self>) -> BufferOf;
}

/// A buffer made from a typed vector (opaque).
pub struct BufferOf(Buffer);

impl Fixed for i32 {
    const FORMAT: &'static str = "i";
    fn buffer(v: Vec<Self>) -> BufferOf {
        BufferOf(Buffer::I32(v))
    }
}
impl Fixed for i64 {
    const FORMAT: &'static str = "l";
    fn buffer(v: Vec<Self>) -> BufferOf {
        BufferOf(Buffer::I64(v))
    }
}
impl Fixed for f64 {
    const FORMAT: &'static str = "g";
    fn buffer(v: Vec<Self>) -> BufferOf {
        BufferOf(Buffer::F64(v))
    }
}

impl Array {
    /// A column of numbers (its vectors moved, not copied).
    pub fn fixed<T: Fixed>(c: Col<T>) -> Array {
        Array {
            format: T::FORMAT,
            len: c.values.len(),
            nulls: c.nulls,
            buffers: vec![c.valid.map(Buffer::U8), Some(T::buffer(c.values).0)],
            children: Vec::new(),
            dictionary: None,
        }
    }

    /// A column of numbers without nulls.
    pub fn values<T: Fixed>(v: Vec<T>) -> Array {
        Array::fixed(Col {
            values: v,
            valid: None,
            nulls: 0,
        })
    }

    /// A boolean column from bytes (0 false, else true).
    pub fn boolean(c: Col<u8>) -> Array {
        let mut bits = vec![0u8; c.values.len().div_ceil(8)];
        for (i, &v) in c.values.iter().enumerate() {
            if v != 0 {
                bits[i / 8] |= 1 << (i % 8);
            }
        }
        Array {
            format: "b",
            len: c.values.len(),
            nulls: c.nulls,
            buffers: vec![c.valid.map(Buffer::U8), Some(Buffer::U8(bits))],
            children: Vec::new(),
            dictionary: None,
        }
    }

    /// A column of UTF-8 strings (`None`: null).
    pub fn strings<S: AsRef<str>>(items: impl IntoIterator<Item = Option<S>>) -> Array {
        let mut offsets = vec![0i32];
        let mut data = Vec::new();
        let mut valid = Col::<u8>::default();
        for s in items {
            if let Some(s) = &s {
                data.extend_from_slice(s.as_ref().as_bytes());
            }
            valid.opt(s.map(|_| 1));
            offsets.push(i32::try_from(data.len()).expect("a string column under 2 GiB"));
        }
        Array {
            format: "u",
            len: offsets.len() - 1,
            nulls: valid.nulls,
            buffers: vec![
                valid.valid.map(Buffer::U8),
                Some(Buffer::I32(offsets)),
                Some(Buffer::U8(data)),
            ],
            children: Vec::new(),
            dictionary: None,
        }
    }

    /// A column of strings without nulls.
    pub fn texts<S: AsRef<str>>(items: impl IntoIterator<Item = S>) -> Array {
        Array::strings(items.into_iter().map(Some))
    }

    /// A dictionary-encoded string column: the names of ids `ids` (pandas: a Categorical,
    /// whose categories are distinct: ids of one name share a code). An id outside `names`
    /// (never made by the engine) is an error, not an out-of-bounds read for the reader.
    pub fn dictionary<S: AsRef<str>>(mut ids: Col<i32>, names: &[S]) -> Array {
        let mut distinct: Vec<&str> = Vec::new();
        let mut code_of_name: HashMap<&str, i32> = HashMap::new();
        let code: Vec<i32> = names
            .iter()
            .map(|n| {
                let n = n.as_ref();
                *code_of_name.entry(n).or_insert_with(|| {
                    distinct.push(n);
                    distinct.len() as i32 - 1
                })
            })
            .collect();
        let valid = ids.valid.as_deref();
        for (i, v) in ids.values.iter_mut().enumerate() {
            let present = valid.is_none_or(|b| b[i / 8] & (1 << (i % 8)) != 0);
            *v = if present {
                *code.get(*v as usize).expect("a name for every id")
            } else {
                0
            };
        }
        let mut a = Array::fixed(ids);
        a.dictionary = Some(Box::new(Array::texts(distinct)));
        a
    }
}

/// Columns of equal length, named: a record batch.
#[derive(Default)]
pub struct Batch {
    len: Option<usize>,
    columns: Vec<(String, Array)>,
}

impl Batch {
    /// Adds a column (all columns have one length).
    pub fn add(&mut self, name: &str, a: Array) -> &mut Batch {
        let len = *self.len.get_or_insert(a.len);
        assert_eq!(len, a.len, "column {name}: {} rows, not {len}", a.len);
        self.columns.push((name.to_string(), a));
        self
    }

    /// Rows.
    pub fn rows(&self) -> usize {
        self.len.unwrap_or(0)
    }

    /// The batch as the C data interface's schema and array (a struct of the columns),
    /// owning every vector.
    pub fn export(self) -> (FfiSchema, FfiArray) {
        let top = Array {
            format: "+s",
            len: self.len.unwrap_or(0),
            nulls: 0,
            buffers: vec![None],
            children: self.columns,
            dictionary: None,
        };
        export_schema_and_array("", top)
    }
}

struct SchemaPrivate {
    _format: CString,
    _name: CString,
    children: Vec<*mut FfiSchema>,
    dictionary: *mut FfiSchema,
}

struct ArrayPrivate {
    _buffers: Vec<Option<Buffer>>,
    pointers: Vec<*const c_void>,
    children: Vec<*mut FfiArray>,
    dictionary: *mut FfiArray,
}

fn export_schema_and_array(name: &str, a: Array) -> (FfiSchema, FfiArray) {
    let nullable = a.nulls > 0 || a.buffers.first().is_some_and(|b| b.is_some());
    let (mut child_schemas, mut child_arrays) = (Vec::new(), Vec::new());
    for (n, c) in a.children {
        let (s, arr) = export_schema_and_array(&n, c);
        child_schemas.push(Box::into_raw(Box::new(s)));
        child_arrays.push(Box::into_raw(Box::new(arr)));
    }
    let (dict_schema, dict_array) = match a.dictionary {
        Some(d) => {
            let (s, arr) = export_schema_and_array("", *d);
            (Box::into_raw(Box::new(s)), Box::into_raw(Box::new(arr)))
        }
        None => (ptr::null_mut(), ptr::null_mut()),
    };
    let format = CString::new(a.format).expect("format");
    let cname = CString::new(name).expect("a column name without NUL");
    let mut sp = Box::new(SchemaPrivate {
        _format: format,
        _name: cname,
        children: child_schemas,
        dictionary: dict_schema,
    });
    let schema = FfiSchema {
        format: sp._format.as_ptr(),
        name: sp._name.as_ptr(),
        metadata: ptr::null(),
        flags: if nullable { NULLABLE } else { 0 },
        n_children: sp.children.len() as i64,
        children: sp.children.as_mut_ptr(),
        dictionary: sp.dictionary,
        release: Some(release_schema),
        private_data: Box::into_raw(sp).cast(),
    };
    let pointers = a
        .buffers
        .iter()
        .map(|b| b.as_ref().map_or(ptr::null(), Buffer::ptr))
        .collect();
    let mut ap = Box::new(ArrayPrivate {
        _buffers: a.buffers,
        pointers,
        children: child_arrays,
        dictionary: dict_array,
    });
    let array = FfiArray {
        length: a.len as i64,
        null_count: a.nulls as i64,
        offset: 0,
        n_buffers: ap.pointers.len() as i64,
        n_children: ap.children.len() as i64,
        buffers: ap.pointers.as_mut_ptr(),
        children: ap.children.as_mut_ptr(),
        dictionary: ap.dictionary,
        release: Some(release_array),
        private_data: Box::into_raw(ap).cast(),
    };
    (schema, array)
}

/// The schema's release callback: releases its children and dictionary, frees what it owns.
unsafe extern "C" fn release_schema(s: *mut FfiSchema) {
    // SAFETY: called once by the consumer on a schema made by export_schema_and_array (or one
    // moved from it), whose private data is a boxed SchemaPrivate.
    unsafe {
        let s = &mut *s;
        let p = Box::from_raw(s.private_data.cast::<SchemaPrivate>());
        for &c in &p.children {
            let mut child = Box::from_raw(c);
            if let Some(r) = child.release {
                r(&mut *child);
            }
        }
        if !p.dictionary.is_null() {
            let mut d = Box::from_raw(p.dictionary);
            if let Some(r) = d.release {
                r(&mut *d);
            }
        }
        s.release = None;
    }
}

/// The array's release callback: releases its children and dictionary, frees its vectors.
unsafe extern "C" fn release_array(a: *mut FfiArray) {
    // SAFETY: as release_schema, with a boxed ArrayPrivate.
    unsafe {
        let a = &mut *a;
        let p = Box::from_raw(a.private_data.cast::<ArrayPrivate>());
        for &c in &p.children {
            let mut child = Box::from_raw(c);
            if let Some(r) = child.release {
                r(&mut *child);
            }
        }
        if !p.dictionary.is_null() {
            let mut d = Box::from_raw(p.dictionary);
            if let Some(r) = d.release {
                r(&mut *d);
            }
        }
        a.release = None;
    }
}

/// Releases a schema the consumer did not take (its `release` still set).
pub fn drop_schema(s: &mut FfiSchema) {
    if let Some(r) = s.release {
        // SAFETY: a schema made here and not released yet.
        unsafe { r(s) }
    }
}

/// Releases an array the consumer did not take.
pub fn drop_array(a: &mut FfiArray) {
    if let Some(r) = a.release {
        // SAFETY: an array made here and not released yet.
        unsafe { r(a) }
    }
}
