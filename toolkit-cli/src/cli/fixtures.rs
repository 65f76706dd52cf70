//! What the unit tests of `report` and `call` read: a small Petstore document ([`PETSTORE`]),
//! written to a temporary [`File`] removed when dropped.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

/// A Petstore document with one operation that is a tool and one that is skipped (a multipart
/// body).
pub const PETSTORE: &str = r#"
openapi: 3.0.3
info: {title: Pets, version: "1"}
servers: [{url: "https://petstore.example.com/v1"}]
paths:
  /pets/{petId}:
    get:
      operationId: showPetById
      parameters:
        - {name: petId, in: path, required: true, schema: {type: integer}}
      responses:
        200: {description: ok}
    post:
      operationId: uploadPhoto
      parameters:
        - {name: petId, in: path, required: true, schema: {type: integer}}
      requestBody:
        content:
          multipart/form-data: {schema: {type: object}}
      responses:
        200: {description: ok}
"#;

/// [`PETSTORE`] in a file.
pub fn petstore() -> File {
    File::new("petstore.yaml", PETSTORE)
}

/// A file in the target directory's temp space, removed when dropped.
pub struct File(PathBuf);

impl File {
    /// `text` written to a file named `name`, in a folder of this process and test thread.
    pub fn new(name: &str, text: &str) -> Self {
        let dir = std::env::temp_dir().join(format!(
            "toolkit-gen-test-{}-{}",
            std::process::id(),
            std::thread::current()
                .name()
                .unwrap_or("t")
                .replace("::", "_")
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        Self(path)
    }

    /// Where the file is.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for File {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}
