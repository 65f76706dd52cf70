//! Real documents' modules compiled by rustc.
