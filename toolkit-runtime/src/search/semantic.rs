//! The meaning half of a hybrid [`SearchIndex`](super::SearchIndex): each tool's vector from an
//! [`Embedder`], the query's at search time, and their fusion with the ranking on words.

use std::sync::Arc;

use super::embedder::{Embedder, EmbedderError};

/// Reciprocal rank fusion: a tool scores `1 / (RANK_OFFSET + rank)` for its rank on words and
/// `MEANING_WEIGHT / (RANK_OFFSET + rank)` for its rank by meaning (ranks from 0). Tuned on
/// MetaTool's development half (`examples/search_eval.rs`): of offsets 5, 20, 60 and meaning
/// weights 0.5 to 2, this pair ranked best (recall@5 0.794, against 0.753 for the best weighted
/// sum of scaled scores).
const RANK_OFFSET: f32 = 5.0;
/// See [`RANK_OFFSET`].
const MEANING_WEIGHT: f32 = 2.0;
/// The least cosine similarity at which a tool that shares no word with the query still matches
/// it (0.1 to 0.3 moved recall@5 on the development half by at most 0.001).
pub(crate) const MIN_SIMILARITY: f32 = 0.2;

/// Every tool's vector, one after another, and the model that made them.
#[derive(Clone)]
pub(crate) struct Semantic {
    embedder: Arc<Embedder>,
    vectors: Vec<f32>,
}

impl std::fmt::Debug for Semantic {
    /// The model and how many floats, not the floats (a few million at 10,000 tools).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Semantic")
            .field("embedder", &self.embedder)
            .field("floats", &self.vectors.len())
            .finish()
    }
}

impl Semantic {
    /// The vectors of these texts (a tool each).
    pub(crate) fn new(embedder: Arc<Embedder>, texts: &[String]) -> Result<Self, EmbedderError> {
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        let vectors = embedder.embed_many(&texts)?.concat();
        Ok(Self { embedder, vectors })
    }

    /// Each tool's cosine similarity to `query` (the vectors have length one).
    pub(crate) fn similarities(&self, query: &str) -> Result<Vec<f32>, EmbedderError> {
        let query = self.embedder.embed(query)?;
        Ok(self
            .vectors
            .chunks_exact(query.len().max(1))
            .map(|tool| tool.iter().zip(&query).map(|(a, b)| a * b).sum())
            .collect())
    }
}

/// The fused score of each tool by reciprocal rank fusion of its rank on words (if it has a
/// word of the query) and its rank by meaning; zero for a tool that neither shares a word with
/// the query nor comes near it in meaning, so it does not match.
pub(crate) fn fuse(words: &[f32], similarities: &[f32]) -> Vec<f32> {
    let word_ranks = ranks(words);
    let meaning_ranks = ranks(similarities);
    words
        .iter()
        .zip(similarities)
        .enumerate()
        .map(|(tool, (&words, &similarity))| {
            if words <= 0.0 && similarity < MIN_SIMILARITY {
                return 0.0;
            }
            let by_words = if words > 0.0 {
                1.0 / (RANK_OFFSET + word_ranks[tool] as f32)
            } else {
                0.0
            };
            by_words + MEANING_WEIGHT / (RANK_OFFSET + meaning_ranks[tool] as f32)
        })
        .collect()
}

/// Each tool's rank by `scores`, best first from 0 (ties in the tools' order).
fn ranks(scores: &[f32]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_unstable_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
    let mut ranks = vec![0; scores.len()];
    for (rank, tool) in order.into_iter().enumerate() {
        ranks[tool] = rank;
    }
    ranks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_matches_by_words_or_by_meaning_and_both_count() {
        let words = [4.0, 0.0, 0.0, 2.0];
        let similarities = [0.1, 0.6, MIN_SIMILARITY - 0.01, 0.6];
        let fused = fuse(&words, &similarities);
        // Far in meaning and no word: no match.
        assert_eq!(fused[2], 0.0);
        // Near in meaning without a word of the query: a match.
        assert!(fused[1] > 0.0);
        // Words alone match however far the meaning.
        assert!(fused[0] > 0.0);
        // Words and meaning beat meaning alone.
        assert!(fused[3] > fused[1]);
        // A query that matches no word ranks by meaning.
        let fused = fuse(&[0.0, 0.0], &[0.3, 0.5]);
        assert!(fused[1] > fused[0] && fused[0] > 0.0);
    }
}
