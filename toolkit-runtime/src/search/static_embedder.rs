//! Static token vectors distilled from a sentence-embedding model: [`StaticEmbedder`] (feature
//! `search-embeddings`).

use std::collections::HashMap;
use std::fmt;
use std::path::Path;

use candle_core::{DType, Device, Tensor};

use super::embedder::{Embedder, EmbedderError, scale_to_unit};
use super::wordpiece::WordPiece;
use super::words::is_common;

/// How many of the vectors' main directions distilling takes out (of 3, 5, 7, 10 and 20, five
/// ranked best on MetaTool's development half: `examples/search_eval.rs`).
const COMMON_DIRECTIONS: usize = 5;
/// The weight of a token is `SIF / (SIF + p)`, `p` its frequency as Zipf's law gives it from its
/// rank (the smooth inverse frequency of Arora et al.; of 10⁻³, 10⁻⁴ and 10⁻⁵, 10⁻⁴ ranked best).
const SIF: f32 = 1e-4;
/// The id from which a token's rank counts: the ids before (BERT's unused slots and marks) all
/// take the first rank, and so almost no weight. (BERT's single characters follow, from 999,
/// then its words, from 1996; ranking from the characters rather than the words was what was
/// tuned.)
const FIRST_WORD: usize = 999;
/// How many texts go through the model at once while distilling.
const BATCH: usize = 256;

/// A tensor's name in a saved model.
const VECTORS: &str = "vectors";
/// See [`VECTORS`]: the vocabulary, one token a line.
const VOCABULARY: &str = "vocabulary";

/// Static token vectors: a text's vector is the sum of its tokens' vectors, scaled to length one.
///
/// A transformer reads a query in about 20 ms on a CPU; a static model looks each token's vector
/// up and adds them, in microseconds. [`StaticEmbedder::distill`] makes one from an [`Embedder`],
/// as Model2Vec does: every token of the vocabulary is run through the model once, between its
/// two marks, and its vector read at its own place; the mean of the vectors and their five main
/// directions are taken out (they are shared by every token, and say nothing of meaning); and
/// each vector is scaled by how rare its token is (by its place in the vocabulary, which BERT's
/// orders by frequency; the common words of asking that the ranking on words discounts, such as
/// `can`, `please` or `tool`, weigh nothing). A hybrid index over one further scales each token
/// by how few of its tools hold it.
///
/// Distilling runs the model on each of the vocabulary's 30,522 tokens (in batches of 256; about
/// 30 s on two cores): do it once, [`save`] the result (23 MB) and [`load`] it where it is used.
///
/// [`save`]: StaticEmbedder::save
/// [`load`]: StaticEmbedder::load
///
/// ```no_run
/// use std::sync::Arc;
/// use toolkit_runtime::{search::Embedder, search::SearchIndex, search::StaticEmbedder};
///
/// // Once, ahead (about 30 s):
/// let model = Embedder::load("target/peers/all-minilm-l6-v2")?;
/// StaticEmbedder::distill(&model)?.save("minilm-static.safetensors")?;
///
/// // Where tools are searched:
/// let model = Arc::new(StaticEmbedder::load("minilm-static.safetensors")?);
/// # let definitions: Vec<toolkit_runtime::ToolDefinition> = Vec::new();
/// let index = SearchIndex::hybrid(&definitions, model)?;
/// # Ok::<(), toolkit_runtime::search::EmbedderError>(())
/// ```
pub struct StaticEmbedder {
    words: WordPiece,
    dimensions: usize,
    /// One vector a token, by id, one after another.
    vectors: Vec<f32>,
}

impl fmt::Debug for StaticEmbedder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StaticEmbedder")
            .field("dimensions", &self.dimensions)
            .field("tokens", &self.tokens())
            .finish_non_exhaustive()
    }
}

impl StaticEmbedder {
    /// Distills `model`'s static token vectors (see [`StaticEmbedder`]). Runs the model once for
    /// each token of its vocabulary.
    pub fn distill(model: &Embedder) -> Result<Self, EmbedderError> {
        let words = model.words().clone();
        let dimensions = model.dimensions();
        if dimensions == 0 {
            return Err(EmbedderError::new("the model's vectors have no dimension"));
        }
        let tokens = words.len();
        let ids: Vec<u32> = (0..u32::try_from(tokens).unwrap_or(u32::MAX)).collect();
        let mut vectors = Vec::with_capacity(tokens * dimensions);
        for batch in ids.chunks(BATCH) {
            vectors.extend(model.alone(batch)?.into_iter().flatten());
        }
        remove_common_directions(&mut vectors, dimensions, COMMON_DIRECTIONS)?;
        let mut common = vec![false; tokens];
        for (token, id) in words.tokens() {
            common[id as usize] = is_common(token);
        }
        for (id, vector) in vectors.chunks_exact_mut(dimensions).enumerate() {
            let weight = if common[id] { 0.0 } else { weight(id) };
            vector.iter_mut().for_each(|x| *x *= weight);
        }
        Ok(Self {
            words,
            dimensions,
            vectors,
        })
    }

    /// Saves the vectors (as 16-bit floats) and the vocabulary in one safetensors file.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), EmbedderError> {
        let path = path.as_ref();
        let tokens = self.tokens();
        let vectors = Tensor::from_slice(&self.vectors, (tokens, self.dimensions), &Device::Cpu)?
            .to_dtype(DType::F16)?;
        let vocabulary = self.words.vocabulary_text().into_bytes();
        let length = vocabulary.len();
        let vocabulary = Tensor::from_vec(vocabulary, length, &Device::Cpu)?;
        let tensors = HashMap::from([
            (VECTORS.to_owned(), vectors),
            (VOCABULARY.to_owned(), vocabulary),
        ]);
        candle_core::safetensors::save(&tensors, path)
            .map_err(|error| EmbedderError::new(format!("cannot save {}: {error}", path.display())))
    }

    /// Loads what [`StaticEmbedder::save`] saved.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, EmbedderError> {
        let path = path.as_ref();
        let refused = |what: &str| {
            EmbedderError::new(format!(
                "{} is no static model saved by StaticEmbedder::save: {what}",
                path.display()
            ))
        };
        let unreadable = |error: candle_core::Error| {
            EmbedderError::new(format!("cannot read {}: {error}", path.display()))
        };
        let mut tensors = candle_core::safetensors::load(path, &Device::Cpu).map_err(unreadable)?;
        let vocabulary = tensors
            .remove(VOCABULARY)
            .ok_or_else(|| refused("it has no vocabulary"))?
            .to_vec1::<u8>()
            .map_err(|_| refused("its vocabulary is not text"))?;
        let vocabulary =
            String::from_utf8(vocabulary).map_err(|_| refused("its vocabulary is not UTF-8"))?;
        let words = WordPiece::from_vocabulary(&vocabulary)
            .map_err(|error| refused(&format!("its vocabulary: {error}")))?;
        let vectors = tensors
            .remove(VECTORS)
            .ok_or_else(|| refused("it has no vectors"))?;
        if !matches!(vectors.dtype(), DType::F16 | DType::F32) {
            return Err(refused("its vectors are not 16- or 32-bit floats"));
        }
        let (tokens, dimensions) = vectors
            .dims2()
            .map_err(|_| refused("its vectors are not a table"))?;
        if dimensions == 0 {
            return Err(refused("its vectors have no dimension"));
        }
        if tokens != words.len() {
            return Err(refused("its vectors and its vocabulary differ in length"));
        }
        let vectors = vectors
            .to_dtype(DType::F32)
            .and_then(|vectors| vectors.flatten_all()?.to_vec1::<f32>())
            .map_err(unreadable)?;
        if !vectors.iter().all(|x| x.is_finite()) {
            return Err(refused(
                "a vector holds a value that is not a finite number",
            ));
        }
        Ok(Self {
            words,
            dimensions,
            vectors,
        })
    }

    /// How long the vectors are.
    pub fn dimensions(&self) -> usize {
        self.dimensions
    }

    /// How many tokens the vocabulary holds.
    pub fn tokens(&self) -> usize {
        self.vectors.len() / self.dimensions.max(1)
    }

    /// The vector of `text`: its tokens' vectors added, scaled to length one (zero when no token
    /// of it weighs anything).
    pub fn embed(&self, text: &str) -> Vec<f32> {
        self.embed_weighted(&self.token_ids(text), |_| 1.0)
    }

    /// The ids of `text`'s tokens, its marks left out: a text is read whole, however long.
    pub(crate) fn token_ids(&self, text: &str) -> Vec<u32> {
        let mut ids = self.words.encode(text, usize::MAX);
        ids.pop();
        ids.remove(0);
        ids
    }

    /// The sum of these tokens' vectors, each scaled by `weight`, at length one.
    pub(crate) fn embed_weighted(&self, ids: &[u32], weight: impl Fn(u32) -> f32) -> Vec<f32> {
        let mut sum = vec![0.0f32; self.dimensions];
        for &id in ids {
            let start = id as usize * self.dimensions;
            if let Some(vector) = self.vectors.get(start..start + self.dimensions) {
                let weight = weight(id);
                sum.iter_mut()
                    .zip(vector)
                    .for_each(|(sum, x)| *sum += weight * x);
            }
        }
        scale_to_unit(&mut sum);
        sum
    }
}

/// A token's weight by its id: `SIF / (SIF + p)`, `p` its Zipf frequency at its rank among the
/// vocabulary's words.
fn weight(id: usize) -> f32 {
    let rank = id.max(FIRST_WORD) - FIRST_WORD + 1;
    // Zipf's law over 30,000 ranks: p(r) = 1 / (r · H), H the harmonic number (about 10.9).
    let frequency = 1.0 / (rank as f32 * 10.9);
    SIF / (SIF + frequency)
}

/// Takes the mean of `vectors` (rows of `dimensions`) out of each, then their `directions` main
/// directions (found by power iteration on the covariance, each after the ones before are taken
/// out), and scales each to length one. Written here: candle has no eigenvectors, and a linear
/// algebra crate for ten power iterations on a 384 × 384 matrix would be more than the code.
fn remove_common_directions(
    vectors: &mut [f32],
    dimensions: usize,
    directions: usize,
) -> Result<(), EmbedderError> {
    if dimensions == 0 || vectors.is_empty() {
        return Ok(());
    }
    let rows = vectors.len() / dimensions;
    let mut mean = vec![0f64; dimensions];
    for row in vectors.chunks_exact(dimensions) {
        mean.iter_mut()
            .zip(row)
            .for_each(|(mean, x)| *mean += f64::from(*x));
    }
    mean.iter_mut().for_each(|mean| *mean /= rows as f64);
    for row in vectors.chunks_exact_mut(dimensions) {
        row.iter_mut()
            .zip(&mean)
            .for_each(|(x, mean)| *x -= *mean as f32);
    }
    // The covariance (up to a factor) as one product of the centred rows with themselves, by
    // candle's matrix product: 30,522 × 384 × 384 sums by hand would take a minute unoptimised.
    let covariance: Vec<f64> = Tensor::from_slice(vectors, (rows, dimensions), &Device::Cpu)
        .and_then(|rows| rows.t()?.matmul(&rows)?.flatten_all()?.to_vec1::<f32>())
        .map(|covariance| covariance.into_iter().map(f64::from).collect())
        .map_err(|error| EmbedderError::new(format!("distilling failed: {error}")))?;
    let mut found: Vec<Vec<f64>> = Vec::with_capacity(directions);
    for _ in 0..directions.min(dimensions) {
        let mut direction = vec![1.0f64; dimensions];
        for _ in 0..100 {
            let mut next: Vec<f64> = covariance
                .chunks_exact(dimensions)
                .map(|line| line.iter().zip(&direction).map(|(a, b)| a * b).sum())
                .collect();
            for before in &found {
                let along: f64 = next.iter().zip(before).map(|(a, b)| a * b).sum();
                next.iter_mut()
                    .zip(before)
                    .for_each(|(x, b)| *x -= along * b);
            }
            let length = next.iter().map(|x| x * x).sum::<f64>().sqrt();
            if length == 0.0 {
                break;
            }
            direction = next.into_iter().map(|x| x / length).collect();
        }
        found.push(direction);
    }
    for row in vectors.chunks_exact_mut(dimensions) {
        for direction in &found {
            let along: f64 = row
                .iter()
                .zip(direction)
                .map(|(a, b)| f64::from(*a) * b)
                .sum();
            row.iter_mut()
                .zip(direction)
                .for_each(|(x, b)| *x -= (along * b) as f32);
        }
        scale_to_unit(row);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_main_direction_is_taken_out_and_rows_keep_length_one() {
        // Every row leans along the first axis; what tells them apart is the second and third.
        let mut vectors = vec![
            5.0, 1.0, 0.0, //
            5.2, 0.0, 1.0, //
            4.8, -1.0, 0.0, //
            5.0, 0.0, -1.0,
        ];
        remove_common_directions(&mut vectors, 3, 1).expect("candle multiplies a 4 × 3 matrix");
        for row in vectors.chunks_exact(3) {
            let length: f32 = row.iter().map(|x| x * x).sum::<f32>().sqrt();
            assert!((length - 1.0).abs() < 1e-5, "{row:?}");
        }
        // Rows 0 and 2 were opposite once the lean is gone.
        let dot: f32 = vectors[0..3]
            .iter()
            .zip(&vectors[6..9])
            .map(|(a, b)| a * b)
            .sum();
        assert!(dot < -0.9, "{vectors:?}");
    }

    /// A model of four tokens (the last one empty) with these vectors of two dimensions.
    fn small(vectors: Vec<f32>) -> StaticEmbedder {
        StaticEmbedder {
            words: WordPiece::from_vocabulary("[UNK]\n[CLS]\n[SEP]\n\n").expect("a vocabulary"),
            dimensions: 2,
            vectors,
        }
    }

    fn saved(model: &StaticEmbedder, name: &str) -> std::path::PathBuf {
        let path = std::env::temp_dir().join(format!("{name}-{}.safetensors", std::process::id()));
        model.save(&path).expect("saved");
        path
    }

    #[test]
    fn a_saved_model_loads_again_even_with_an_empty_last_token() {
        let path = saved(
            &small(vec![1.0, 0.0, 0.0, 1.0, 0.5, 0.5, -1.0, 0.0]),
            "small",
        );
        let loaded = StaticEmbedder::load(&path).expect("loads");
        assert_eq!((loaded.tokens(), loaded.dimensions()), (4, 2));
        assert_eq!(loaded.vectors, [1.0, 0.0, 0.0, 1.0, 0.5, 0.5, -1.0, 0.0]);
        std::fs::remove_file(path).expect("removed");
    }

    #[test]
    fn a_model_with_a_value_that_is_no_number_is_refused() {
        for bad in [f32::INFINITY, f32::NAN] {
            let path = saved(&small(vec![1.0, 0.0, bad, 1.0, 0.5, 0.5, -1.0, 0.0]), "bad");
            let error = StaticEmbedder::load(&path)
                .expect_err("refused")
                .to_string();
            assert!(error.contains("not a finite number"), "{error}");
            std::fs::remove_file(path).expect("removed");
        }
    }

    #[test]
    fn rare_tokens_weigh_more_and_marks_almost_nothing() {
        assert!(weight(100) < 0.01);
        assert!(weight(2_000) < weight(10_000));
        assert!(weight(30_000) > 0.9);
    }
}
