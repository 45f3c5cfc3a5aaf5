//! How the board's [`Value`]s cross to PostgreSQL and back. PostgreSQL types every parameter and
//! column; the board's values are SQLite's five storage classes. A parameter is encoded as the
//! type PostgreSQL inferred for it (an integer bound where `int4`, `bool` or `float8` is wanted is
//! converted, and refused only when it does not fit), and a column is read by its type into the
//! class SQLite would have given (`bool` → 0/1, `numeric` → an integer when it is whole).

use std::error::Error as StdError;

use bytes::{BufMut, BytesMut};
use tether_store::sql::Value;
use tokio_postgres::types::{FromSql, IsNull, ToSql, Type, to_sql_checked};

type BoxError = Box<dyn StdError + Sync + Send>;

/// A parameter, encoded as whatever type the statement wants.
#[derive(Debug)]
pub(crate) struct Param<'a>(pub &'a Value);

impl ToSql for Param<'_> {
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        let wrong = |what: &str| -> BoxError { format!("{what} cannot be bound to a parameter of type {ty}").into() };
        match self.0 {
            Value::Null => Ok(IsNull::Yes),
            Value::Int(i) => match *ty {
                Type::INT8 => i.to_sql(ty, out),
                Type::INT4 => i32::try_from(*i)?.to_sql(ty, out),
                Type::INT2 => i16::try_from(*i)?.to_sql(ty, out),
                Type::BOOL => (*i != 0).to_sql(ty, out),
                Type::FLOAT8 => (*i as f64).to_sql(ty, out),
                Type::FLOAT4 => (*i as f32).to_sql(ty, out),
                Type::TEXT | Type::VARCHAR | Type::UNKNOWN => i.to_string().as_str().to_sql(&Type::TEXT, out),
                _ => Err(wrong("an integer")),
            },
            Value::Real(f) => match *ty {
                Type::FLOAT8 => f.to_sql(ty, out),
                Type::FLOAT4 => (*f as f32).to_sql(ty, out),
                _ => Err(wrong("a real")),
            },
            Value::Text(s) => match *ty {
                Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN => {
                    s.as_str().to_sql(&Type::TEXT, out)
                }
                Type::JSON => {
                    out.put_slice(s.as_bytes());
                    Ok(IsNull::No)
                }
                Type::JSONB => {
                    out.put_u8(1);
                    out.put_slice(s.as_bytes());
                    Ok(IsNull::No)
                }
                _ => Err(wrong("text")),
            },
            Value::Blob(b) => match *ty {
                Type::BYTEA => b.as_slice().to_sql(ty, out),
                _ => Err(wrong("bytes")),
            },
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

/// A column, read as the storage class SQLite would have given.
pub(crate) struct Cell(pub Value);

impl<'a> FromSql<'a> for Cell {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        Ok(Cell(match *ty {
            Type::INT8 => Value::Int(i64::from_sql(ty, raw)?),
            Type::INT4 => Value::Int(i32::from_sql(ty, raw)?.into()),
            Type::INT2 => Value::Int(i16::from_sql(ty, raw)?.into()),
            Type::OID => Value::Int(u32::from_sql(ty, raw)?.into()),
            Type::BOOL => Value::Int(bool::from_sql(ty, raw)?.into()),
            Type::FLOAT8 => Value::Real(f64::from_sql(ty, raw)?),
            Type::FLOAT4 => Value::Real(f32::from_sql(ty, raw)?.into()),
            Type::NUMERIC => numeric(raw)?,
            Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN | Type::JSON => {
                Value::Text(String::from_sql(&Type::TEXT, raw)?)
            }
            Type::JSONB => match raw.split_first() {
                Some((1, rest)) => Value::Text(std::str::from_utf8(rest)?.to_owned()),
                _ => return Err("unknown jsonb version".into()),
            },
            Type::BYTEA => Value::Blob(raw.to_vec()),
            _ => return Err(format!("a column of type {ty} has no board value; cast it in the query").into()),
        }))
    }

    fn from_sql_null(_: &Type) -> Result<Self, BoxError> {
        Ok(Cell(Value::Null))
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

/// PostgreSQL's binary `numeric` (what `sum()` of a `bigint` gives): base-10000 digits with a
/// weight, a sign and a display scale. Whole values that fit are integers, as in SQLite.
fn numeric(raw: &[u8]) -> Result<Value, BoxError> {
    let word = |i: usize| -> Result<u16, BoxError> {
        raw.get(i * 2..i * 2 + 2).map(|b| u16::from_be_bytes([b[0], b[1]])).ok_or_else(|| "short numeric".into())
    };
    let (ndigits, weight, sign, scale) = (word(0)? as usize, word(1)? as i16, word(2)?, word(3)?);
    if sign == 0xC000 {
        return Ok(Value::Real(f64::NAN));
    }
    let negative = sign == 0x4000;
    let mut whole: i128 = 0;
    let mut fits = true;
    let mut real = 0f64;
    for k in 0..ndigits {
        let d = word(4 + k)?;
        let power = i32::from(weight) - k as i32;
        real += f64::from(d) * 10000f64.powi(power);
        if power >= 0 {
            match 10000i128.checked_pow(power as u32).and_then(|p| p.checked_mul(i128::from(d))) {
                Some(v) => whole = whole.saturating_add(v),
                None => fits = false,
            }
        } else if d != 0 {
            fits = false;
        }
    }
    let whole = if negative { -whole } else { whole };
    Ok(match i64::try_from(whole) {
        Ok(i) if fits && scale == 0 => Value::Int(i),
        _ => Value::Real(if negative { -real } else { real }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(words: &[u16]) -> Vec<u8> {
        words.iter().flat_map(|w| w.to_be_bytes()).collect()
    }

    #[test]
    fn numerics_read_as_sqlite_would_give_them() {
        // 123456789 = 1·10000² + 2345·10000 + 6789, weight 2.
        assert_eq!(numeric(&enc(&[3, 2, 0, 0, 1, 2345, 6789])).unwrap(), Value::Int(123_456_789));
        assert_eq!(numeric(&enc(&[1, 0, 0x4000, 0, 42])).unwrap(), Value::Int(-42));
        assert_eq!(numeric(&enc(&[0, 0, 0, 0])).unwrap(), Value::Int(0));
        // 1.5 = 1 + 5000·10000⁻¹, scale 1.
        assert_eq!(numeric(&enc(&[2, 0, 0, 1, 1, 5000])).unwrap(), Value::Real(1.5));
    }
}
