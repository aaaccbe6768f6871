//! A value of any interface type with every field set, for tests that compare the shared
//! structs with another definition of the same interface: numbers count up field by field,
//! strings are `s<n>`, sequences have two elements, booleans are true. Two definitions agree
//! when their samples serialize alike, field names and order included.
use serde::de::{self, DeserializeSeed, Deserializer, SeqAccess, Visitor};

pub fn sample<T: serde::de::DeserializeOwned>() -> T {
    T::deserialize(&mut Sample { next: 0 }).expect("a sample of every interface type")
}

struct Sample {
    next: u64,
}

impl Sample {
    fn next(&mut self) -> u64 {
        self.next += 1;
        self.next
    }
}

/// The elements of a sequence, tuple or struct.
struct Elements<'a> {
    sample: &'a mut Sample,
    left: usize,
}

impl<'de> SeqAccess<'de> for Elements<'_> {
    type Error = de::value::Error;
    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, Self::Error> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        seed.deserialize(&mut *self.sample).map(Some)
    }
}

macro_rules! numbers {
    ($($method:ident => $visit:ident($ty:ty)),* $(,)?) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
            // Small enough for every integer type; floats get a fraction.
            visitor.$visit((self.next() % 100) as $ty)
        }
    )*};
}

impl<'de> Deserializer<'de> for &mut Sample {
    type Error = de::value::Error;

    numbers! {
        deserialize_i8 => visit_i8(i8),
        deserialize_i16 => visit_i16(i16),
        deserialize_i32 => visit_i32(i32),
        deserialize_i64 => visit_i64(i64),
        deserialize_u8 => visit_u8(u8),
        deserialize_u16 => visit_u16(u16),
        deserialize_u32 => visit_u32(u32),
        deserialize_u64 => visit_u64(u64),
    }

    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        visitor.visit_f32(self.next() as f32 + 0.5)
    }

    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        visitor.visit_f64(self.next() as f64 + 0.25)
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        visitor.visit_bool(true)
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        visitor.visit_string(format!("s{}", self.next()))
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.deserialize_string(visitor)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        visitor.visit_seq(Elements {
            sample: self,
            left: 2,
        })
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        visitor.visit_seq(Elements {
            sample: self,
            left: len,
        })
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.deserialize_tuple(len, visitor)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.deserialize_tuple(fields.len(), visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        visitor.visit_newtype_struct(self)
    }

    /// Byte arrays read as one run (`serde_bytes`): two elements, as a sequence has.
    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        let bytes = (0..2).map(|_| (self.next() % 100) as u8).collect();
        visitor.visit_byte_buf(bytes)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.deserialize_byte_buf(visitor)
    }

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom(
            "an interface field of a self-describing type",
        ))
    }

    serde::forward_to_deserialize_any! {
        i128 u128 char option unit unit_struct map enum identifier ignored_any
    }
}
