// The compiled readers; see src/module.cc.
module.exports = require('./build/Release/columns.node');
