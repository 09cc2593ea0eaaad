// The compiled reader; see src/json_columns.cc.
module.exports = require('./build/Release/json_columns.node');
