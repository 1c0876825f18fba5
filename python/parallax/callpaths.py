"""Callpaths held as a tree: the profiles' callpath column, each path named on demand.

A path is an id into a `Paths` table (its parent's id and its own frame), so a column of N
callpaths of a chain N deep holds N ids, not the N²/2 frames of its texts; a text is built only
when an element is read (`SEPARATOR.join` of its frames, as plx report --format csv writes it).
"""

import numpy as np
import pandas as pd
from pandas.api.extensions import (
    ExtensionArray,
    ExtensionDtype,
    register_extension_dtype,
    take,
)
from pandas.api.indexers import check_array_indexer
from pandas.api.types import is_integer

try:  # the .str methods of an object column, on the texts (pandas' own mixin where it has one)
    from pandas.core.strings.object_array import ObjectStringArrayMixin as _StrMethods
except ImportError:  # pragma: no cover (pandas without it: no .str on the column)
    _StrMethods = object

# a callpath's frames in its text, as plx report --format csv joins them
SEPARATOR = " => "
# the id of a missing path (a row added by reindexing)
NA = -1


class Paths:
    """Distinct callpaths, one id each; a path's parent always has a smaller id than it."""

    def __init__(self):
        self.parent = []  # id -> parent id, NA for a root
        self.name = []  # id -> its last frame
        self.depth = []  # id -> frames above it
        self._ids = {}  # (parent id, name) -> id

    def __len__(self):
        return len(self.name)

    def intern(self, parent, name):
        """The id of `name` called from path `parent` (NA: a root), added if new."""
        key = (parent, name)
        i = self._ids.get(key)
        if i is None:
            i = len(self.name)
            self._ids[key] = i
            self.parent.append(parent)
            self.name.append(name)
            self.depth.append(0 if parent == NA else self.depth[parent] + 1)
        return i

    def frames(self, i):
        """Path `i`'s frames from the root."""
        out = []
        while i != NA:
            out.append(self.name[i])
            i = self.parent[i]
        out.reverse()
        return out

    def text(self, i):
        return SEPARATOR.join(self.frames(i))

    def find(self, text):
        """The id of the path written `text`, or None if no row has it."""
        i = NA
        for name in text.split(SEPARATOR):
            i = self._ids.get((i, name))
            if i is None:
                return None
        return i

    def adopt(self, other, ids):
        """`ids` of table `other` as ids of this table (paths added as needed)."""
        mine = {}
        for i in sorted(set(int(x) for x in ids if x != NA)):
            # ancestors first: each has a smaller id in `other` than its children
            chain = []
            j = i
            while j != NA and j not in mine:
                chain.append(j)
                j = other.parent[j]
            for k in reversed(chain):
                p = other.parent[k]
                mine[k] = self.intern(NA if p == NA else mine[p], other.name[k])
        return np.array([NA if x == NA else mine[int(x)] for x in ids], dtype=np.int64)


@register_extension_dtype
class CallpathDtype(ExtensionDtype):
    """The dtype of the profiles' callpath column: elements are str (frames joined by ' => ')."""

    name = "callpath"
    type = str
    kind = "O"

    @classmethod
    def construct_array_type(cls):
        return CallpathArray


class CallpathArray(_StrMethods, ExtensionArray):
    """Callpaths as ids into a shared `Paths` table; an element read is its text, built then.
    Comparing with a text, unique, value_counts, factorize and groupby work on the ids (linear
    in rows); the .str methods, sorting and conversions build the texts."""

    def __init__(self, ids, paths):
        self._ids = np.asarray(ids, dtype=np.int64)
        self._paths = paths

    @classmethod
    def _from_sequence(cls, scalars, *, dtype=None, copy=False):
        paths = Paths()
        ids = []
        for s in scalars:
            if s is None or (isinstance(s, float) and np.isnan(s)):
                ids.append(NA)
                continue
            i = NA
            for name in str(s).split(SEPARATOR):
                i = paths.intern(i, name)
            ids.append(i)
        return cls(ids, paths)

    @classmethod
    def _from_factorized(cls, values, original):
        return cls(values, original._paths)

    @property
    def dtype(self):
        return CallpathDtype()

    @property
    def path_ids(self):
        """Each row's path id in `paths` (NA where missing)."""
        return self._ids

    @property
    def paths(self):
        """The `Paths` table the ids point into."""
        return self._paths

    @property
    def nbytes(self):
        return self._ids.nbytes

    def __len__(self):
        return len(self._ids)

    def __getitem__(self, item):
        if is_integer(item):
            i = self._ids[item]
            return self.dtype.na_value if i == NA else self._paths.text(int(i))
        item = check_array_indexer(self, item)
        return type(self)(self._ids[item], self._paths)

    def isna(self):
        return self._ids == NA

    def take(self, indices, allow_fill=False, fill_value=None):
        ids = take(self._ids, indices, allow_fill=allow_fill, fill_value=NA)
        return type(self)(ids, self._paths)

    def copy(self):
        return type(self)(self._ids.copy(), self._paths)

    @classmethod
    def _concat_same_type(cls, to_concat):
        paths = to_concat[0]._paths
        ids = [a._ids if a._paths is paths else paths.adopt(a._paths, a._ids)
               for a in to_concat]
        return cls(np.concatenate(ids) if ids else [], paths)

    def _values_for_factorize(self):
        return self._ids, NA

    def unique(self):
        return type(self)(pd.unique(self._ids), self._paths)

    def value_counts(self, dropna=True):
        ids = self._ids[self._ids != NA] if dropna else self._ids
        ids, counts = np.unique(ids, return_counts=True)
        return pd.Series(counts, index=pd.Index(type(self)(ids, self._paths)), name="count")

    def __eq__(self, other):
        if isinstance(other, (pd.Series, pd.Index, pd.DataFrame)):
            return NotImplemented
        if isinstance(other, str):
            i = self._paths.find(other)
            return self._ids == i if i is not None else np.zeros(len(self), dtype=bool)
        if isinstance(other, CallpathArray) and other._paths is self._paths:
            return (self._ids == other._ids) & (self._ids != NA)
        other = np.asarray(other, dtype=object)
        return np.array([a == b for a, b in zip(self, other)], dtype=bool)

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else ~eq

    def __array__(self, dtype=None, copy=None):
        texts = np.array([self[i] for i in range(len(self))], dtype=object)
        return texts if dtype is None else texts.astype(dtype)

    def __arrow_array__(self, type=None):  # noqa: A002 (pyarrow's protocol names it so)
        import pyarrow as pa
        return pa.array([self[i] for i in range(len(self))], type=type or pa.string())

    def frames(self, i):
        """Row `i`'s frames from the root, as a tuple."""
        return tuple(self._paths.frames(int(self._ids[i])))
