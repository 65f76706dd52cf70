//! [`Mcp`]'s skills (SEP-2640, the `io.modelcontextprotocol/skills` extension): `skills/list`
//! and `skills/get` give each skill's entry ([`Skill`]: the URI of its `SKILL.md`, its
//! frontmatter, and the digest and size of each of its files), and its files are resources read
//! with `resources/read`. [`Mcp::load_skill`] reads a skill's `SKILL.md` and keeps it only when
//! its bytes match the entry's digest and size and its frontmatter the entry's;
//! [`Mcp::read_skill_file`] reads a supporting file the entry lists, verified the same way. A
//! mismatch is refused, naming the file and what differed, and nothing of it is kept.
//!
//! The digests prove that an entry and the content agree, not that either is trustworthy (the
//! server gives both): they are checked so that what a person approved from an entry is what
//! reaches the model.

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest as _, Sha256};

use super::resources::with_uri;
use super::source::Mcp;
use toolkit_core::{JsonObject, Reason, ToolSourceError};

/// The extension's identifier, under `capabilities.extensions`.
pub const SKILLS_EXTENSION: &str = "io.modelcontextprotocol/skills";

/// The most files a skill may have, `SKILL.md` included (the extension's limit).
pub const MAX_SKILL_FILES: usize = 512;

/// The most bytes a skill's files may have in all (16 MiB, the extension's limit).
pub const MAX_SKILL_BYTES: u64 = 16 * 1024 * 1024;

/// The file every skill has at its root.
const SKILL_MD: &str = "SKILL.md";

/// One skill's entry, as `skills/list` and `skills/get` give it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Skill {
    /// The URI of its `SKILL.md` (`skill://<path>/SKILL.md`), whose last path segment before
    /// `SKILL.md` is its name.
    pub uri: String,
    /// Its `SKILL.md`'s YAML frontmatter, as JSON: `name` and `description`, and whatever else
    /// the author wrote.
    pub frontmatter: JsonObject,
    /// Its files, each with its digest and size; or none, when the server generates them
    /// ("dynamic": nothing to verify them by).
    pub resources: SkillFiles,
}

/// A skill's files.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SkillFiles {
    /// Every file of the skill, `SKILL.md` included, each once.
    Listed(Vec<SkillFile>),
    /// The string `"dynamic"`: the server makes the files as they are read.
    Dynamic(String),
}

/// One file of a skill: its URI, the SHA-256 of its bytes (`sha256:` and 64 lowercase hex
/// digits) and their number.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillFile {
    /// The file's resource URI.
    pub uri: String,
    /// `sha256:{hex}` of its bytes.
    pub digest: String,
    /// How many bytes it has.
    pub size: u64,
}

impl SkillFile {
    /// The entry of a file of `bytes` at `uri`.
    pub fn of(uri: impl Into<String>, bytes: &[u8]) -> Self {
        Self {
            uri: uri.into(),
            digest: digest(bytes),
            size: bytes.len() as u64,
        }
    }

    /// Whether `bytes` are this file's: the same size, the same digest.
    ///
    /// # Errors
    ///
    /// What differs, for a person.
    pub fn verify(&self, bytes: &[u8]) -> Result<(), String> {
        if bytes.len() as u64 != self.size {
            return Err(format!(
                "{} has {} bytes where its skill's entry says {}",
                self.uri,
                bytes.len(),
                self.size
            ));
        }
        let read = digest(bytes);
        if read != self.digest {
            return Err(format!(
                "{} does not match its digest: the entry says {}, its content is {read}",
                self.uri, self.digest
            ));
        }
        Ok(())
    }
}

/// `sha256:{hex}` of `bytes`.
pub fn digest(bytes: &[u8]) -> String {
    let sum = Sha256::digest(bytes);
    let mut text = String::with_capacity(7 + 64);
    text.push_str("sha256:");
    for byte in sum {
        text.push_str(&format!("{byte:02x}"));
    }
    text
}

impl Skill {
    /// Its name (the frontmatter's `name`).
    pub fn name(&self) -> &str {
        self.frontmatter
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    /// Its description (the frontmatter's `description`).
    pub fn description(&self) -> &str {
        self.frontmatter
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    /// The URI of its directory: its `SKILL.md`'s without `/SKILL.md`.
    pub fn root(&self) -> &str {
        self.uri
            .strip_suffix(SKILL_MD)
            .and_then(|root| root.strip_suffix('/'))
            .unwrap_or(&self.uri)
    }

    /// The entry of its file `uri`, when it lists it.
    pub fn file(&self, uri: &str) -> Option<&SkillFile> {
        match &self.resources {
            SkillFiles::Listed(files) => files.iter().find(|file| file.uri == uri),
            SkillFiles::Dynamic(_) => None,
        }
    }

    /// Whether the entry is one a host may load, as the extension says: its URI names a
    /// `SKILL.md` under a path whose last segment is its name, it has a description, and its
    /// files are listed completely (its `SKILL.md` among them, each under its directory, each
    /// digest well formed) within the limits, or said to be dynamic.
    ///
    /// # Errors
    ///
    /// The first problem, for a person.
    pub fn check(&self) -> Result<(), String> {
        let uri = &self.uri;
        let name = self.name();
        if name.is_empty() {
            return Err(format!("the skill {uri} has no `name` in its frontmatter"));
        }
        if self.description().is_empty() {
            return Err(format!(
                "the skill {uri} has no `description` in its frontmatter"
            ));
        }
        let last = self.root().rsplit(['/', ':']).next().unwrap_or_default();
        if !uri.ends_with(&format!("/{SKILL_MD}")) || last != name {
            return Err(format!(
                "the skill {uri} is named {name:?}: its URI has to end in /{name}/{SKILL_MD}"
            ));
        }
        let files = match &self.resources {
            SkillFiles::Dynamic(word) if word == "dynamic" => return Ok(()),
            SkillFiles::Dynamic(other) => {
                return Err(format!(
                    "the skill {uri} has `resources` {other:?}: a list of files or \"dynamic\""
                ));
            }
            SkillFiles::Listed(files) => files,
        };
        if files.len() > MAX_SKILL_FILES {
            return Err(format!(
                "the skill {uri} has {} files, more than {MAX_SKILL_FILES}",
                files.len()
            ));
        }
        let total: u64 = files
            .iter()
            .map(|file| file.size)
            .fold(0, u64::saturating_add);
        if total > MAX_SKILL_BYTES {
            return Err(format!(
                "the skill {uri} has {total} bytes of files, more than {MAX_SKILL_BYTES}"
            ));
        }
        if !files.iter().any(|file| file.uri == *uri) {
            return Err(format!("the skill {uri} does not list its own {SKILL_MD}"));
        }
        let inside = format!("{}/", self.root());
        for (index, file) in files.iter().enumerate() {
            if !file.uri.starts_with(&inside) || file.uri.split('/').any(|part| part == "..") {
                return Err(format!(
                    "the skill {uri} lists {}, which is not in its directory",
                    file.uri
                ));
            }
            if !is_digest(&file.digest) {
                return Err(format!(
                    "the skill {uri} lists {} with the digest {:?}: `sha256:` and 64 lowercase \
                     hex digits are expected",
                    file.uri, file.digest
                ));
            }
            if files[..index].iter().any(|before| before.uri == file.uri) {
                return Err(format!("the skill {uri} lists {} twice", file.uri));
            }
        }
        Ok(())
    }
}

/// Whether `digest` is `sha256:` and 64 lowercase hex digits.
fn is_digest(digest: &str) -> bool {
    digest.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64
            && hex
                .bytes()
                .all(|byte| byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte))
    })
}

/// A skill loaded: its entry, and its `SKILL.md` as verified against it. Its `Display` is the
/// text a model is handed: `model::anthropic_instructions(&skill.to_string())` (or
/// [`openai_instructions`](toolkit_core::model::openai_instructions)) puts it in a request.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadedSkill {
    /// The entry it was loaded by (held while the skill is acted on: its files are read by it).
    pub skill: Skill,
    /// Its `SKILL.md`, frontmatter and all.
    pub text: String,
    /// Whether its content was verified against digests (not when the server said its files
    /// are dynamic).
    pub verified: bool,
}

impl LoadedSkill {
    /// Its instructions: `SKILL.md` after its frontmatter.
    pub fn body(&self) -> &str {
        split_frontmatter(&self.text).map_or(self.text.as_str(), |(_, body)| body)
    }
}

impl std::fmt::Display for LoadedSkill {
    /// The skill as a model is handed it: its name, its description, where its files are, and its
    /// instructions.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "Skill {}: {}",
            self.skill.name(),
            self.skill.description()
        )?;
        writeln!(
            f,
            "Its files are resources under {}/ (paths in it are relative to there).",
            self.skill.root()
        )?;
        writeln!(f)?;
        f.write_str(self.body().trim_start_matches(['\r', '\n']))
    }
}

/// `text`'s YAML frontmatter (between its first two `---` lines) and what follows it.
fn split_frontmatter(text: &str) -> Option<(&str, &str)> {
    let rest = text
        .strip_prefix("---\r\n")
        .or_else(|| text.strip_prefix("---\n"))?;
    let mut at = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end_matches(['\r', '\n']) == "---" {
            return Some((&rest[..at], &rest[at + line.len()..]));
        }
        at += line.len();
    }
    None
}

/// The frontmatter of `text` as JSON.
fn frontmatter(text: &str) -> Result<JsonObject, String> {
    let (yaml, _) =
        split_frontmatter(text).ok_or("it does not begin with a YAML frontmatter (`---`)")?;
    let value: Value = serde_yaml_ng::from_str(yaml)
        .map_err(|error| format!("its frontmatter is not YAML: {error}"))?;
    match value {
        Value::Object(object) => Ok(object),
        _ => Err("its frontmatter is not a mapping".to_owned()),
    }
}

impl Mcp {
    /// Whether the server declared the skills extension (in its `initialize` answer's
    /// `capabilities.extensions`).
    ///
    /// # Errors
    ///
    /// As [`Mcp::capabilities`].
    pub async fn has_skills(&self) -> Result<bool, ToolSourceError> {
        Ok(self.capabilities().await?.is_some_and(|capabilities| {
            capabilities
                .pointer(&format!(
                    "/extensions/{}",
                    SKILLS_EXTENSION.replace('/', "~1")
                ))
                .is_some_and(Value::is_object)
        }))
    }

    /// The skills the server lists (every page of `skills/list`). An entry a host may not load
    /// (not a skill's shape, or refused by [`Skill::check`]) is left out, and logged.
    ///
    /// # Errors
    ///
    /// [`Unsupported`](Reason::Unsupported) when the server did not declare the extension;
    /// else as [`Mcp::list_resources`].
    pub async fn list_skills(&self) -> Result<Vec<Skill>, ToolSourceError> {
        self.skills_declared().await?;
        let listed = self.every_page("skills/list", "skills").await?;
        let mut skills = Vec::with_capacity(listed.len());
        for entry in listed {
            let skill = serde_json::from_value::<Skill>(entry)
                .map_err(|error| format!("a skills/list entry is not a skill: {error}"));
            match skill.and_then(|skill| skill.check().map(|()| skill)) {
                Ok(skill) => skills.push(skill),
                Err(problem) => {
                    tracing::warn!(source = %toolkit_core::ToolSource::name(self), "a skill left out: {problem}");
                }
            }
        }
        Ok(skills)
    }

    /// The entry of the skill whose `SKILL.md` is `uri` (`skills/get`).
    ///
    /// # Errors
    ///
    /// [`NotFound`](Reason::NotFound) for a skill the server does not serve; an entry that is
    /// not the skill asked for, or one a host may not load, is
    /// [`InvalidResponse`](Reason::InvalidResponse); else as [`Mcp::list_skills`].
    pub async fn get_skill(&self, uri: &str) -> Result<Skill, ToolSourceError> {
        self.skills_declared().await?;
        let result = self
            .ask("skills/get", with_uri(uri), super::resources::too_large)
            .await?;
        let skill: Skill = result
            .get("skill")
            .cloned()
            .ok_or("no `skill`".to_owned())
            .and_then(|skill| serde_json::from_value(skill).map_err(|error| error.to_string()))
            .map_err(|error| {
                self.error(Reason::invalid_response(format!(
                    "the skills/get answer for {uri} is no skill: {error}"
                )))
            })?;
        if skill.uri != uri {
            return Err(self.error(Reason::invalid_response(format!(
                "skills/get for {uri} answered the skill {}",
                skill.uri
            ))));
        }
        skill
            .check()
            .map_err(|problem| self.error(Reason::invalid_response(problem)))?;
        Ok(skill)
    }

    /// Loads the skill whose `SKILL.md` is `uri`: its entry (`skills/get`), then its `SKILL.md`,
    /// kept only when its bytes match the entry's digest and size and its frontmatter is the
    /// entry's, field for field.
    ///
    /// # Errors
    ///
    /// A mismatch is [`InvalidResponse`](Reason::InvalidResponse), naming the file and what
    /// differs; else as [`Mcp::get_skill`] and [`Mcp::read_resource`].
    pub async fn load_skill(&self, uri: &str) -> Result<LoadedSkill, ToolSourceError> {
        let skill = self.get_skill(uri).await?;
        self.load(skill).await
    }

    /// Loads `skill` from the entry held (one of [`Mcp::list_skills`]), as
    /// [`Mcp::load_skill`] does.
    ///
    /// # Errors
    ///
    /// As [`Mcp::load_skill`].
    pub async fn load(&self, skill: Skill) -> Result<LoadedSkill, ToolSourceError> {
        let (bytes, verified) = match skill.file(&skill.uri) {
            Some(file) => (self.read_verified(file).await?, true),
            None => (self.read_bytes(&skill.uri).await?, false),
        };
        let text = String::from_utf8(bytes).map_err(|_| {
            self.error(Reason::invalid_response(format!(
                "{} is not UTF-8 text",
                skill.uri
            )))
        })?;
        let written = frontmatter(&text).map_err(|problem| {
            self.error(Reason::invalid_response(format!(
                "{}: {problem}",
                skill.uri
            )))
        })?;
        if written != skill.frontmatter {
            return Err(self.error(Reason::invalid_response(format!(
                "{}: its frontmatter differs from its skill's entry",
                skill.uri
            ))));
        }
        Ok(LoadedSkill {
            skill,
            text,
            verified,
        })
    }

    /// Reads the file `uri` of the loaded `skill`, verified against the entry it was loaded by.
    ///
    /// # Errors
    ///
    /// A file the entry does not list, or whose bytes do not match it, is
    /// [`InvalidResponse`](Reason::InvalidResponse) (a skill whose files are dynamic has none
    /// to verify: its files are read as they are); else as [`Mcp::read_resource`].
    pub async fn read_skill_file(
        &self,
        skill: &LoadedSkill,
        uri: &str,
    ) -> Result<Vec<u8>, ToolSourceError> {
        match (&skill.skill.resources, skill.skill.file(uri)) {
            (_, Some(file)) => self.read_verified(file).await,
            (SkillFiles::Dynamic(_), None)
                if uri.starts_with(&format!("{}/", skill.skill.root())) =>
            {
                self.read_bytes(uri).await
            }
            _ => Err(self.error(Reason::invalid_response(format!(
                "{uri} is not a file of the skill {}",
                skill.skill.uri
            )))),
        }
    }

    /// `file`'s bytes, once they match its entry.
    async fn read_verified(&self, file: &SkillFile) -> Result<Vec<u8>, ToolSourceError> {
        let bytes = self.read_bytes(&file.uri).await?;
        file.verify(&bytes)
            .map_err(|problem| self.error(Reason::invalid_response(problem)))?;
        Ok(bytes)
    }

    /// The bytes of the resource `uri` (its first content's `text`, or its `blob` decoded).
    async fn read_bytes(&self, uri: &str) -> Result<Vec<u8>, ToolSourceError> {
        let read = self.read_resource(uri).await?;
        let content = read
            .get("contents")
            .and_then(Value::as_array)
            .and_then(|contents| contents.first());
        match (
            content
                .and_then(|content| content.get("text"))
                .and_then(Value::as_str),
            content
                .and_then(|content| content.get("blob"))
                .and_then(Value::as_str),
        ) {
            (Some(text), _) => Ok(text.as_bytes().to_vec()),
            (None, Some(blob)) => base64::engine::general_purpose::STANDARD
                .decode(blob)
                .map_err(|_| {
                    self.error(Reason::invalid_response(format!(
                        "{uri}: its `blob` is not base64"
                    )))
                }),
            (None, None) => Err(self.error(Reason::invalid_response(format!(
                "{uri}: the server read no text and no blob"
            )))),
        }
    }

    /// Refuses when the server did not declare the extension.
    async fn skills_declared(&self) -> Result<(), ToolSourceError> {
        if self.has_skills().await? {
            Ok(())
        } else {
            Err(self.error(Reason::Unsupported {
                description: "the server serves no skills (it did not declare the skills \
                              extension)"
                    .into(),
            }))
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn entry(files: Vec<SkillFile>) -> Skill {
        let frontmatter = json!({"name": "refunds", "description": "Refund requests."});
        Skill {
            uri: "skill://acme/refunds/SKILL.md".into(),
            frontmatter: frontmatter.as_object().cloned().unwrap_or_default(),
            resources: SkillFiles::Listed(files),
        }
    }

    #[test]
    fn a_file_is_verified_by_its_size_and_digest() {
        let file = SkillFile::of("skill://acme/refunds/SKILL.md", b"hello");
        assert_eq!(
            file.digest,
            "sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
        );
        assert!(file.verify(b"hello").is_ok());
        let longer = file.verify(b"hello!").err().unwrap_or_default();
        assert!(
            longer.contains("6 bytes where its skill's entry says 5"),
            "{longer}"
        );
        let other = file.verify(b"jello").err().unwrap_or_default();
        assert!(other.contains("does not match its digest"), "{other}");
    }

    #[test]
    fn only_an_entry_a_host_may_load_checks() {
        let skill_md = SkillFile::of("skill://acme/refunds/SKILL.md", b"x");
        assert_eq!(entry(vec![skill_md.clone()]).check(), Ok(()));
        let problems = [
            (entry(vec![]), "does not list its own SKILL.md"),
            (
                entry(vec![
                    skill_md.clone(),
                    SkillFile::of("skill://acme/other/x.md", b"x"),
                ]),
                "not in its directory",
            ),
            (
                entry(vec![
                    skill_md.clone(),
                    SkillFile::of("skill://acme/refunds/../x.md", b"x"),
                ]),
                "not in its directory",
            ),
            (
                entry(vec![SkillFile {
                    digest: "sha256:ABC".into(),
                    ..skill_md.clone()
                }]),
                "64 lowercase hex digits",
            ),
            (
                entry(vec![SkillFile {
                    size: MAX_SKILL_BYTES + 1,
                    ..skill_md.clone()
                }]),
                "more than 16777216",
            ),
            (
                Skill {
                    uri: "skill://acme/billing/SKILL.md".into(),
                    ..entry(vec![skill_md.clone()])
                },
                "has to end in /refunds/SKILL.md",
            ),
            (
                Skill {
                    resources: SkillFiles::Dynamic("static".into()),
                    ..entry(vec![])
                },
                "a list of files or \"dynamic\"",
            ),
        ];
        for (skill, expected) in problems {
            let problem = skill.check().err().unwrap_or_default();
            assert!(problem.contains(expected), "{problem}");
        }
        let many = (0..=MAX_SKILL_FILES)
            .map(|index| SkillFile::of(format!("skill://acme/refunds/{index}.md"), b""))
            .collect();
        let problem = entry(many).check().err().unwrap_or_default();
        assert!(problem.contains("513 files"), "{problem}");
    }

    #[test]
    fn the_frontmatter_is_read_as_json_and_the_body_follows_it() {
        let text = "---\r\nname: refunds\ndescription: Refund requests.\nmetadata:\n  version: \"2\"\n---\n\n# Refunds\nAsk first.\n";
        let read = frontmatter(text).unwrap_or_default();
        assert_eq!(
            Value::Object(read),
            json!({"name": "refunds", "description": "Refund requests.", "metadata": {"version": "2"}})
        );
        let loaded = LoadedSkill {
            skill: entry(vec![]),
            text: text.into(),
            verified: true,
        };
        assert_eq!(loaded.body(), "\n# Refunds\nAsk first.\n");
        let shown = loaded.to_string();
        assert!(
            shown.starts_with("Skill refunds: Refund requests.\n"),
            "{shown}"
        );
        assert!(shown.ends_with("# Refunds\nAsk first.\n"), "{shown}");
        assert!(frontmatter("# no frontmatter").is_err());
        assert!(frontmatter("---\n- a list\n---\n").is_err());
    }
}
