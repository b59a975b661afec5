"""Multi-node layouts (DS313-DS318): the node launches of one job, checked against each other.

A layout is what ``dslint.launch.layout`` groups (the rule page of `node-ranks` says how): the
node launches of one job on several machines. Each rule page names the launcher behaviour it
mirrors. Look-alike launches of several jobs are judged node by node only.
"""
