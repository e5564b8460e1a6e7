mod approvals;
mod gather;
mod hooks;
mod outcomes;
mod queues;
mod sessions;
mod support;
mod tools;
