//! Background lifecycle jobs: a submit returns a snapshot at once (`j-1a2b3c4d`, state,
//! elapsed) and the work runs on its own thread with its own runtime, so the protocol loop
//! never blocks. One job at a time; the last 20 are kept for `job_status`.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::Serialize;
use serde_json::Value;

use crate::error::{ErrorCode, KnowcodeError, Stage};
use crate::index::Progress;

const KEEP: usize = 20;

/// Where a job is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum JobState {
    Running,
    Succeeded,
    Failed,
}

/// What `job_status` (and a submit) returns about one job.
#[derive(Debug, Clone, Serialize)]
pub struct JobStatus {
    pub job_id: String,
    pub action: String,
    pub state: JobState,
    /// The pipeline stage running (`queued` before, `done` after).
    pub phase: String,
    pub elapsed_s: f64,
    /// Items of the current phase done and in all, while running.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub done: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Seconds left in the current phase at its rate so far.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eta_s: Option<f64>,
    /// The job's answer, once succeeded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// `{error, code, hint}`, once failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<Value>,
}

struct Job {
    id: String,
    action: String,
    state: JobState,
    phase: String,
    started: Instant,
    finished: Option<Instant>,
    done: u64,
    total: u64,
    phase_started: Instant,
    outcome: Option<Value>,
}

impl Job {
    fn snapshot(&self) -> JobStatus {
        let end = self.finished.unwrap_or_else(Instant::now);
        let counting = self.state == JobState::Running && self.total > 0;
        let eta_s = (counting && self.done > 0).then(|| {
            let per_item = self.phase_started.elapsed().as_secs_f64() / self.done as f64;
            (per_item * (self.total - self.done) as f64).round()
        });
        let (result, error) = match (&self.outcome, self.state) {
            (Some(result), JobState::Succeeded) => (Some(result.clone()), None),
            (Some(error), JobState::Failed) => (None, Some(error.clone())),
            _ => (None, None),
        };
        JobStatus {
            job_id: self.id.clone(),
            action: self.action.clone(),
            state: self.state,
            phase: self.phase.clone(),
            elapsed_s: (end - self.started).as_secs_f64().round(),
            done: counting.then_some(self.done),
            total: counting.then_some(self.total),
            eta_s,
            result,
            error,
        }
    }
}

/// The job table of one server.
#[derive(Clone, Default)]
pub struct Jobs {
    jobs: Arc<Mutex<VecDeque<Job>>>,
}

/// Progress of one job, written by the pipeline.
struct JobProgress {
    jobs: Jobs,
    id: String,
}

impl Progress for JobProgress {
    fn stage(&self, stage: Stage, total: u64) {
        self.jobs.update(&self.id, |job| {
            job.phase = stage.as_str().to_string();
            job.total = total;
            job.done = 0;
            job.phase_started = Instant::now();
        });
    }

    fn advance(&self, n: u64) {
        self.jobs.update(&self.id, |job| job.done += n);
    }
}

/// The error a panicked job ends with, carrying the panic's message.
fn panicked(panic: &(dyn std::any::Any + Send)) -> KnowcodeError {
    let message = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    KnowcodeError::new(ErrorCode::Internal, format!("the job panicked: {message}"))
}

fn new_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    format!("j-{:08x}", hasher.finish() as u32)
}

impl Jobs {
    fn update(&self, id: &str, change: impl FnOnce(&mut Job)) {
        if let Some(job) = self
            .jobs
            .lock()
            .expect("jobs lock")
            .iter_mut()
            .find(|j| j.id == id)
        {
            change(job);
        }
    }

    /// Starts `work` in the background unless a job is running.
    pub fn submit<F>(&self, action: &str, work: F) -> Result<JobStatus, KnowcodeError>
    where
        F: FnOnce(&dyn Progress) -> Result<Value, KnowcodeError> + Send + 'static,
    {
        let id = {
            let mut jobs = self.jobs.lock().expect("jobs lock");
            if let Some(running) = jobs.iter().find(|j| j.state == JobState::Running) {
                return Err(KnowcodeError::new(
                    ErrorCode::JobAlreadyRunning,
                    format!("job {} ({}) is still running", running.id, running.action),
                ));
            }
            let id = new_id();
            let now = Instant::now();
            jobs.push_back(Job {
                id: id.clone(),
                action: action.to_string(),
                state: JobState::Running,
                phase: "queued".into(),
                started: now,
                finished: None,
                done: 0,
                total: 0,
                phase_started: now,
                outcome: None,
            });
            while jobs.len() > KEEP {
                jobs.pop_front();
            }
            id
        };
        let jobs = self.clone();
        let job_id = id.clone();
        std::thread::Builder::new()
            .name(format!("knowcode-{job_id}"))
            .spawn(move || {
                let progress = JobProgress {
                    jobs: jobs.clone(),
                    id: job_id.clone(),
                };
                // A panic inside the work ends the job `failed` (code `internal`) instead of
                // leaving it `running` forever, which would refuse every later lifecycle call.
                let outcome =
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(&progress)))
                        .unwrap_or_else(|panic| Err(panicked(panic.as_ref())));
                jobs.update(&job_id, |job| {
                    job.finished = Some(Instant::now());
                    job.phase = "done".into();
                    match outcome {
                        Ok(result) => {
                            job.state = JobState::Succeeded;
                            job.outcome = Some(result);
                        }
                        Err(err) => {
                            job.state = JobState::Failed;
                            job.outcome = Some(err.to_json());
                        }
                    }
                });
            })
            .map_err(|e| {
                KnowcodeError::new(
                    ErrorCode::Internal,
                    format!("cannot start a job thread: {e}"),
                )
            })?;
        self.status(Some(&id))
    }

    /// The snapshot of one job, or of the latest when `id` is None.
    pub fn status(&self, id: Option<&str>) -> Result<JobStatus, KnowcodeError> {
        let jobs = self.jobs.lock().expect("jobs lock");
        let job = match id {
            Some(id) => jobs.iter().find(|j| j.id == id).ok_or_else(|| {
                KnowcodeError::new(
                    ErrorCode::UnknownJob,
                    format!("no job `{id}` (the last {KEEP} are kept)"),
                )
            })?,
            None => jobs
                .back()
                .ok_or_else(|| KnowcodeError::new(ErrorCode::NoJobs, "no job has been started"))?,
        };
        Ok(job.snapshot())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wait(jobs: &Jobs, id: &str) -> Value {
        for _ in 0..500 {
            let status = serde_json::to_value(jobs.status(Some(id)).unwrap()).unwrap();
            if status["state"] != "running" {
                return status;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        panic!("job {id} still running");
    }

    #[test]
    fn a_panicking_job_ends_failed_and_the_next_job_can_start() {
        let jobs = Jobs::default();
        let first = jobs
            .submit("build", |_| panic!("boom in the pipeline"))
            .unwrap();
        let done = wait(&jobs, &first.job_id);
        assert_eq!(done["state"], "failed", "{done}");
        assert_eq!(done["error"]["code"], "internal", "{done}");
        assert!(
            done["error"]["error"]
                .as_str()
                .unwrap()
                .contains("boom in the pipeline"),
            "{done}"
        );
        assert!(
            !done["error"]["hint"].as_str().unwrap().is_empty(),
            "{done}"
        );
        let second = jobs
            .submit("index", |_| Ok(serde_json::json!({"ok": true})))
            .unwrap();
        let done = wait(&jobs, &second.job_id);
        assert_eq!(done["state"], "succeeded", "{done}");
    }
}
