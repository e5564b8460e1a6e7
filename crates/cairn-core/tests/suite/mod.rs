mod approvals;
mod hooks;
mod outcomes;
mod queues;
mod sessions;
mod support;
mod tools;
