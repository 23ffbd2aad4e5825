//! `arev schema`: print or write the JSON Schemas of the wire types.

use crate::cli::SchemaArgs;
use crate::errors::ExpectedError;
use crate::output;
use crate::store::write_atomic;

pub(crate) fn schema_command(args: &SchemaArgs) -> Result<(), ExpectedError> {
    let all = crate::schema::schemas();
    match &args.write {
        Some(dir) => {
            std::fs::create_dir_all(dir).map_err(|e| ExpectedError::write(dir, e))?;
            for (name, text) in all {
                let p = dir.join(format!("{name}.schema.json"));
                write_atomic(&p, text.as_bytes()).map_err(|e| ExpectedError::write(&p, e))?;
            }
        }
        None => {
            let joined: serde_json::Map<String, serde_json::Value> = all
                .into_iter()
                .map(|(n, t)| (n.to_string(), serde_json::from_str(&t).unwrap_or_default()))
                .collect();
            output::report(&output::json_string(&joined, true).unwrap_or_default());
        }
    }
    Ok(())
}
