//! Critical path analysis on the program activity graph (IPS-2 and Yang & Miller): intra-application, inter-application and global.
