//! `knobeln bench distributed`: the queue's overhead and the coordinator's ceiling.
