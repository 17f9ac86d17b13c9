//! Arrays: PostgreSQL's `anyarray` values, their text form (`array_in`, `array_out`) and
//! their order (`btarraycmp`).
//!
//! An array has any number of dimensions, each with a length and a lower bound (1 unless
//! the input said otherwise, as in `'[0:1]={a,b}'`), and its elements in row-major order,
//! any of them NULL. An empty array has no dimensions at all, as in PostgreSQL.

use std::cmp::Ordering;

use crate::error::{PgError, PgResult, SqlState};
use crate::ids::Oid;
use crate::limits::MAX_ARRAY_DIMS;
use crate::types::DataType;
use crate::value::{TextContext, Value};

/// One dimension of an array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dim {
    pub len: i32,
    pub lower: i32,
}

/// An array value.
#[derive(Clone, Debug, PartialEq)]
pub struct Array {
    /// The element type's OID (the binary format sends it).
    pub elem: Oid,
    /// Outermost first; empty for an empty array.
    pub dims: Vec<Dim>,
    /// Row-major; as many as the product of the lengths.
    pub items: Vec<Value>,
}

impl Array {
    /// A one-dimensional array with lower bound 1 (empty if `items` is).
    pub fn from_items(elem: Oid, items: Vec<Value>) -> Array {
        let dims = if items.is_empty() {
            vec![]
        } else {
            vec![Dim {
                len: items.len() as i32,
                lower: 1,
            }]
        };
        Array { elem, dims, items }
    }

    pub fn ndims(&self) -> usize {
        self.dims.len()
    }

    /// The dimension `d` (1-based), if the array has it.
    pub fn dim(&self, d: i64) -> Option<Dim> {
        usize::try_from(d)
            .ok()
            .and_then(|d| d.checked_sub(1))
            .and_then(|d| self.dims.get(d).copied())
    }

    /// The element at `subscripts` (one per dimension, each within its bounds), or
    /// `None` (PostgreSQL's NULL for an out-of-range or wrong-arity subscript).
    pub fn get(&self, subscripts: &[i64]) -> Option<&Value> {
        if subscripts.len() != self.dims.len() || self.dims.is_empty() {
            return None;
        }
        let mut offset = 0usize;
        for (s, d) in subscripts.iter().zip(&self.dims) {
            let i = s.checked_sub(d.lower as i64)?;
            if i < 0 || i >= d.len as i64 {
                return None;
            }
            offset = offset * d.len as usize + i as usize;
        }
        self.items.get(offset)
    }

    /// `array_dims`: `[1:3]`, `[1:2][1:2]`, or NULL for an empty array.
    pub fn dims_text(&self) -> Option<String> {
        if self.dims.is_empty() {
            return None;
        }
        Some(
            self.dims
                .iter()
                .map(|d| format!("[{}:{}]", d.lower, d.lower + d.len - 1))
                .collect(),
        )
    }

    /// `array_out`: `{1,2,NULL}`, nested braces per dimension, elements in double quotes
    /// where their text would otherwise be misread, and a `[lo:hi]=` prefix when a lower
    /// bound is not 1.
    pub fn to_text(&self, cx: &TextContext) -> String {
        let mut out = String::new();
        if self.dims.iter().any(|d| d.lower != 1) {
            out.push_str(&self.dims_text().unwrap_or_default());
            out.push('=');
        }
        if self.dims.is_empty() {
            out.push_str("{}");
            return out;
        }
        let mut items = self.items.iter();
        write_level(&mut out, &self.dims, &mut items, cx);
        out
    }

    /// `btarraycmp`: element by element (a NULL element after every value), then the
    /// number of elements, then the number of dimensions, then each dimension's length
    /// and lower bound.
    pub fn array_cmp(&self, other: &Array) -> Ordering {
        for (a, b) in self.items.iter().zip(&other.items) {
            let o = a.cmp_nulls_last(b);
            if o != Ordering::Equal {
                return o;
            }
        }
        self.items
            .len()
            .cmp(&other.items.len())
            .then(self.dims.len().cmp(&other.dims.len()))
            .then_with(|| {
                for (a, b) in self.dims.iter().zip(&other.dims) {
                    let o = a.len.cmp(&b.len).then(a.lower.cmp(&b.lower));
                    if o != Ordering::Equal {
                        return o;
                    }
                }
                Ordering::Equal
            })
    }
}

fn write_level<'a>(
    out: &mut String,
    dims: &[Dim],
    items: &mut impl Iterator<Item = &'a Value>,
    cx: &TextContext,
) {
    out.push('{');
    for i in 0..dims[0].len {
        if i > 0 {
            out.push(',');
        }
        if dims.len() > 1 {
            write_level(out, &dims[1..], items, cx);
        } else {
            match items.next().and_then(|v| v.to_text(cx)) {
                None => out.push_str("NULL"),
                Some(t) => write_element(out, &t),
            }
        }
    }
    out.push('}');
}

/// An element as `array_out` writes it: bare, or in double quotes with `"` and `\`
/// escaped when it is empty, is `NULL` in any case, or holds a brace, the delimiter, a
/// quote, a backslash or white space.
fn write_element(out: &mut String, t: &str) {
    let needs_quotes = t.is_empty()
        || t.eq_ignore_ascii_case("null")
        || t.chars()
            .any(|c| matches!(c, '{' | '}' | ',' | '"' | '\\') || is_array_space(c));
    if !needs_quotes {
        out.push_str(t);
        return;
    }
    out.push('"');
    for c in t.chars() {
        if matches!(c, '"' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
}

/// `array_isspace`: the white space array input skips around elements.
fn is_array_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c')
}

fn malformed(text: &str, detail: &str) -> PgError {
    PgError::new(
        SqlState::INVALID_TEXT_REPRESENTATION,
        format!("malformed array literal: \"{text}\""),
    )
    .with_detail(detail)
}

/// A parsed element before type input: its text, or NULL (an unquoted `NULL`).
enum Raw {
    Null,
    Text(String),
}

/// `array_in`: read `text` as an array of `elem` (each element through the element
/// type's input function, with its type modifier, in the session's context `cx`).
pub fn parse(text: &str, elem: &DataType, cx: &TextContext) -> PgResult<Array> {
    let mut p = Parser {
        text,
        chars: text.char_indices().peekable(),
    };
    p.skip_space();
    // An optional explicit `[lo:hi][lo:hi]=` dimension decoration.
    let mut explicit: Vec<Dim> = vec![];
    while p.peek() == Some('[') {
        p.next();
        let first = p.integer()?;
        let (lower, upper) = if p.peek() == Some(':') {
            p.next();
            (first, p.integer()?)
        } else {
            (1, first)
        };
        if p.next() != Some(']') {
            return Err(malformed(text, "Missing \"]\" after array dimensions."));
        }
        if upper < lower {
            return Err(PgError::new(
                SqlState::ARRAY_SUBSCRIPT_ERROR,
                "upper bound cannot be less than lower bound",
            ));
        }
        explicit.push(Dim {
            len: upper - lower + 1,
            lower,
        });
        if explicit.len() > MAX_ARRAY_DIMS {
            return Err(too_many_dims(explicit.len()));
        }
    }
    if !explicit.is_empty() {
        p.skip_space();
        if p.next() != Some('=') {
            return Err(malformed(text, "Missing \"=\" after array dimensions."));
        }
        p.skip_space();
    }
    if p.peek() != Some('{') {
        return Err(malformed(
            text,
            "Array value must start with \"{\" or dimension information.",
        ));
    }
    let mut raw = vec![];
    let mut lens: Vec<Option<i32>> = vec![];
    p.level(0, &mut lens, &mut raw)?;
    p.skip_space();
    if p.peek().is_some() {
        return Err(malformed(text, "Junk after closing right brace."));
    }
    let lens: Vec<i32> = lens.into_iter().map(|l| l.unwrap_or(0)).collect();
    let dims: Vec<Dim> = if raw.is_empty() {
        vec![]
    } else if explicit.is_empty() {
        lens.iter().map(|&len| Dim { len, lower: 1 }).collect()
    } else {
        if explicit.len() != lens.len() || explicit.iter().zip(&lens).any(|(d, l)| d.len != *l) {
            return Err(malformed(
                text,
                "Specified array dimensions do not match array contents.",
            ));
        }
        explicit
    };
    let items = raw
        .into_iter()
        .map(|r| match r {
            Raw::Null => Ok(Value::Null),
            Raw::Text(t) => Value::parse(&t, elem, cx),
        })
        .collect::<PgResult<Vec<_>>>()?;
    Ok(Array {
        elem: elem.oid(),
        dims,
        items,
    })
}

fn too_many_dims(n: usize) -> PgError {
    PgError::new(
        SqlState::PROGRAM_LIMIT_EXCEEDED,
        format!("number of array dimensions ({n}) exceeds the maximum allowed ({MAX_ARRAY_DIMS})"),
    )
}

struct Parser<'a> {
    text: &'a str,
    chars: std::iter::Peekable<std::str::CharIndices<'a>>,
}

impl Parser<'_> {
    fn peek(&mut self) -> Option<char> {
        self.chars.peek().map(|&(_, c)| c)
    }

    fn next(&mut self) -> Option<char> {
        self.chars.next().map(|(_, c)| c)
    }

    fn skip_space(&mut self) {
        while self.peek().is_some_and(is_array_space) {
            self.next();
        }
    }

    fn integer(&mut self) -> PgResult<i32> {
        let mut s = String::new();
        if matches!(self.peek(), Some('-' | '+')) {
            s.extend(self.next());
        }
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            s.extend(self.next());
        }
        s.parse::<i32>().map_err(|_| {
            malformed(
                self.text,
                "\"[\" must introduce explicitly-specified array dimensions.",
            )
        })
    }

    /// One `{...}` at nesting depth `depth`: either all sub-arrays or all elements, the
    /// same number at every position of a depth (`lens`).
    fn level(
        &mut self,
        depth: usize,
        lens: &mut Vec<Option<i32>>,
        out: &mut Vec<Raw>,
    ) -> PgResult<()> {
        let text = self.text;
        if depth >= MAX_ARRAY_DIMS {
            return Err(too_many_dims(depth + 1));
        }
        self.next(); // '{'
        if lens.len() <= depth {
            lens.push(None);
        }
        let mut count = 0i32;
        let mut nested: Option<bool> = None;
        loop {
            self.skip_space();
            match self.peek() {
                None => return Err(malformed(text, "Unexpected end of input.")),
                Some('}') if count == 0 => {
                    self.next();
                    break;
                }
                Some('{') => {
                    if nested == Some(false) {
                        return Err(malformed(text, "Unexpected \"{\" character."));
                    }
                    nested = Some(true);
                    self.level(depth + 1, lens, out)?;
                }
                Some(_) => {
                    if nested == Some(true) || lens.len() > depth + 1 {
                        return Err(malformed(text, "Unexpected array element."));
                    }
                    nested = Some(false);
                    out.push(self.element()?);
                }
            }
            count += 1;
            self.skip_space();
            match self.next() {
                Some(',') => continue,
                Some('}') => break,
                None => return Err(malformed(text, "Unexpected end of input.")),
                Some(c) => {
                    return Err(malformed(text, &format!("Unexpected \"{c}\" character.")));
                }
            }
        }
        if count == 0 && depth > 0 {
            return Err(malformed(text, "Unexpected \"}\" character."));
        }
        if nested == Some(false) && lens.len() > depth + 1 {
            return Err(malformed(
                text,
                "Multidimensional arrays must have sub-arrays with matching dimensions.",
            ));
        }
        match lens[depth] {
            None => lens[depth] = Some(count),
            Some(n) if n == count => {}
            Some(_) => {
                return Err(malformed(
                    text,
                    "Multidimensional arrays must have sub-arrays with matching dimensions.",
                ));
            }
        }
        Ok(())
    }

    /// One element: quoted (backslash escapes inside), or bare up to the delimiter or a
    /// brace with surrounding white space dropped (backslashes escape there too); a bare
    /// `NULL` in any case is the null element.
    fn element(&mut self) -> PgResult<Raw> {
        let text = self.text;
        let mut s = String::new();
        let mut quoted_any = false;
        // Bare text up to here, without trailing blanks that were not escaped.
        let mut keep = 0;
        loop {
            match self.peek() {
                None => return Err(malformed(text, "Unexpected end of input.")),
                Some('"') => {
                    self.next();
                    quoted_any = true;
                    loop {
                        match self.next() {
                            None => return Err(malformed(text, "Unexpected end of input.")),
                            Some('\\') => match self.next() {
                                None => return Err(malformed(text, "Unexpected end of input.")),
                                Some(c) => s.push(c),
                            },
                            Some('"') => break,
                            Some(c) => s.push(c),
                        }
                    }
                    keep = s.len();
                }
                Some('\\') => {
                    self.next();
                    match self.next() {
                        None => return Err(malformed(text, "Unexpected end of input.")),
                        Some(c) => s.push(c),
                    }
                    keep = s.len();
                }
                Some(',' | '}') => break,
                Some('{') => return Err(malformed(text, "Unexpected \"{\" character.")),
                Some(c) => {
                    self.next();
                    s.push(c);
                    if !is_array_space(c) {
                        keep = s.len();
                    }
                }
            }
        }
        s.truncate(keep);
        if !quoted_any && s.eq_ignore_ascii_case("null") {
            return Ok(Raw::Null);
        }
        Ok(Raw::Text(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(text: &str) -> Array {
        parse(text, &DataType::Int4, &TextContext::detached()).unwrap()
    }

    #[test]
    fn one_dimension_round_trips() {
        let a = ints("{1, 2 ,NULL}");
        assert_eq!(a.dims, vec![Dim { len: 3, lower: 1 }]);
        assert_eq!(a.to_text(&TextContext::detached()), "{1,2,NULL}");
        assert_eq!(ints("{}").to_text(&TextContext::detached()), "{}");
        assert_eq!(ints(" { } ").dims, vec![]);
    }

    #[test]
    fn multidimensional_and_bounds() {
        let a = ints("{{1,2},{3,4}}");
        assert_eq!(a.to_text(&TextContext::detached()), "{{1,2},{3,4}}");
        assert_eq!(a.get(&[2, 1]), Some(&Value::Int4(3)));
        assert_eq!(a.get(&[3, 1]), None);
        assert_eq!(a.dims_text().as_deref(), Some("[1:2][1:2]"));
        let b = ints("[0:1]={7,8}");
        assert_eq!(b.get(&[0]), Some(&Value::Int4(7)));
        assert_eq!(b.to_text(&TextContext::detached()), "[0:1]={7,8}");
        assert!(parse("{{1,2},{3}}", &DataType::Int4, &TextContext::detached()).is_err());
        assert!(parse("{{1,2},3}", &DataType::Int4, &TextContext::detached()).is_err());
        assert!(parse("{1,2", &DataType::Int4, &TextContext::detached()).is_err());
        assert!(parse("1,2", &DataType::Int4, &TextContext::detached()).is_err());
        assert!(parse("{1,,2}", &DataType::Int4, &TextContext::detached()).is_err());
    }

    #[test]
    fn text_elements_quote_what_needs_it() {
        let a = parse(
            r#"{"a b","",NULL,"NULL",x\,y,"q\"q", plain }"#,
            &DataType::Text,
            &TextContext::detached(),
        )
        .unwrap();
        assert_eq!(a.items[2], Value::Null);
        assert_eq!(a.items[3], Value::Text("NULL".into()));
        assert_eq!(a.items[4], Value::Text("x,y".into()));
        assert_eq!(a.items[6], Value::Text("plain".into()));
        assert_eq!(
            a.to_text(&TextContext::detached()),
            r#"{"a b","",NULL,"NULL","x,y","q\"q",plain}"#
        );
    }

    #[test]
    fn element_errors_are_the_element_types() {
        let e = parse("{a}", &DataType::Int4, &TextContext::detached()).unwrap_err();
        assert!(
            e.message.contains("invalid input syntax for type integer"),
            "{}",
            e.message
        );
    }

    #[test]
    fn order_is_elementwise_then_length() {
        assert_eq!(ints("{1,2}").array_cmp(&ints("{1,3}")), Ordering::Less);
        assert_eq!(ints("{1,2}").array_cmp(&ints("{1,2,0}")), Ordering::Less);
        assert_eq!(
            ints("{1,NULL}").array_cmp(&ints("{1,5}")),
            Ordering::Greater
        );
        assert_eq!(
            ints("{1,NULL}").array_cmp(&ints("{1,NULL}")),
            Ordering::Equal
        );
    }
}
